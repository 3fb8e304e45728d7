//! The C header is generated from the public items of `src/lib.rs` (between the API marker and
//! the implementation marker) and committed as `include/langevin.h`. This test regenerates it
//! and fails if the committed file differs; `LANGEVIN_BLESS=1` rewrites the file instead.
//!
//! The generator understands exactly the item shapes the API uses: `pub type`, `pub const`,
//! `#[repr(C)] pub struct` with `pub` fields, and `pub [unsafe] extern "C" fn`, each with `///`
//! docs; anything else at the top level of the API section is an error, so the header cannot
//! silently miss an item.

use std::path::Path;

const BEGIN: &str = "// The C API, mirrored in include/langevin.h.";
const END: &str = "// Implementation (not part of the C API).";

fn c_type(rust: &str) -> String {
    let t = rust.trim();
    if let Some(inner) = t.strip_prefix("*mut ") {
        return format!("{} *", c_type(inner));
    }
    if let Some(inner) = t.strip_prefix("*const ") {
        return format!("const {} *", c_type(inner));
    }
    match t {
        "u8" => "uint8_t",
        "u16" => "uint16_t",
        "u32" => "uint32_t",
        "u64" => "uint64_t",
        "i32" => "int32_t",
        "usize" => "size_t",
        "f32" => "float",
        "f64" => "double",
        "bool" => "bool",
        "c_char" => "char",
        "c_void" => "void",
        other if other.starts_with("Lgv") => other,
        other => panic!("no C type for `{other}`"),
    }
    .to_string()
}

fn comment(docs: &[String], indent: &str) -> String {
    match docs {
        [] => String::new(),
        [one] => format!("{indent}/** {one} */\n"),
        many => {
            let mut s = format!("{indent}/**\n");
            for line in many {
                if line.is_empty() {
                    s.push_str(&format!("{indent} *\n"));
                } else {
                    s.push_str(&format!("{indent} * {line}\n"));
                }
            }
            s.push_str(&format!("{indent} */\n"));
            s
        }
    }
}

/// Splits `a: T, b: U` at top-level commas.
fn params(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (name, ty) = p
                .split_once(':')
                .unwrap_or_else(|| panic!("bad parameter `{p}`"));
            (name.trim().to_string(), ty.trim().to_string())
        })
        .collect()
}

/// `typedef` of an alias: a plain type, or a nullable C function pointer written
/// `Option<unsafe extern "C" fn(a: T, ...) -> R>` (a NULL pointer is `None`).
fn typedef(name: &str, ty: &str) -> String {
    let Some(f) = ty
        .strip_prefix("Option<")
        .and_then(|t| t.strip_suffix('>'))
        .map(|t| t.trim().trim_end_matches(','))
    else {
        return format!("typedef {} {name};\n\n", c_type(ty));
    };
    let f = f
        .trim()
        .strip_prefix("unsafe extern \"C\" fn")
        .unwrap_or_else(|| panic!("unsupported alias `{ty}`"))
        .trim();
    let (plist, ret) = f
        .strip_prefix('(')
        .and_then(|f| f.rsplit_once(')'))
        .expect("function pointer parameters");
    let ret = ret
        .trim()
        .strip_prefix("->")
        .map_or("void".to_string(), c_type);
    let args = params(plist)
        .iter()
        .map(|(n, t)| format!("{} {n}", c_type(t)))
        .collect::<Vec<_>>()
        .join(", ");
    format!("typedef {ret} (*{name})({args});\n\n").replace("* ", "*")
}

fn generate(source: &str) -> String {
    let api = source
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(api, _)| api)
        .expect("API markers in src/lib.rs");
    let mut out = String::from(
        "/*\n * langevin.h: C ABI of the langevin chains (every no_std sampler of the registry on\n \
         * built-in models or on targets given by C callbacks), in caller-owned memory.\n *\n \
         * Generated from ffi/src/lib.rs; do not edit. Regenerate with\n \
         * LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test header\n */\n\
         #ifndef LANGEVIN_H\n#define LANGEVIN_H\n\n\
         #include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    let mut docs: Vec<String> = Vec::new();
    let mut lines = api.lines().peekable();
    while let Some(raw) = lines.next() {
        let line = raw.trim();
        if let Some(d) = line.strip_prefix("///") {
            docs.push(d.strip_prefix(' ').unwrap_or(d).to_string());
            continue;
        }
        if line.is_empty() || line.starts_with("//") || line.starts_with("#[") {
            if line.is_empty() {
                docs.clear();
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("pub type ") {
            // Gather an alias that spans lines (function pointers) up to its semicolon.
            let mut rest = rest.to_string();
            while !rest.trim_end().ends_with(';') {
                rest.push(' ');
                rest.push_str(lines.next().expect("type alias").trim());
            }
            let (name, ty) = rest
                .trim_end_matches(';')
                .split_once('=')
                .expect("type alias");
            out += &comment(&docs, "");
            out += &typedef(name.trim(), ty.trim());
        } else if let Some(rest) = line.strip_prefix("pub const ") {
            let (decl, value) = rest.trim_end_matches(';').split_once('=').expect("const");
            let (name, ty) = decl.split_once(':').expect("const type");
            let value = value.trim().replace('_', "");
            let suffix = match ty.trim() {
                "u32" | "usize" => "u",
                "u64" => "ull",
                _ => "",
            };
            out += &comment(&docs, "");
            out += &format!("#define {} {}{}\n\n", name.trim(), value, suffix);
        } else if let Some(rest) = line.strip_prefix("pub struct ") {
            let name = rest.trim_end_matches('{').trim();
            out += &comment(&docs, "");
            out += &format!("typedef struct {name} {{\n");
            docs.clear();
            for raw in lines.by_ref() {
                let f = raw.trim();
                if f == "}" {
                    break;
                }
                if let Some(d) = f.strip_prefix("///") {
                    docs.push(d.strip_prefix(' ').unwrap_or(d).to_string());
                    continue;
                }
                let field = f
                    .strip_prefix("pub ")
                    .unwrap_or_else(|| panic!("non-public field `{f}` in {name}"));
                let (fname, fty) = field.trim_end_matches(',').split_once(':').expect("field");
                out += &comment(&docs, "    ");
                docs.clear();
                let fty = fty.trim();
                if let Some(arr) = fty.strip_prefix('[').and_then(|a| a.strip_suffix(']')) {
                    let (ety, n) = arr.split_once(';').expect("array field");
                    out += &format!("    {} {}[{}];\n", c_type(ety), fname.trim(), n.trim());
                } else {
                    out += &format!("    {} {};\n", c_type(fty), fname.trim()).replace("* ", "*");
                }
            }
            out += &format!("}} {name};\n\n");
        } else if line.starts_with("pub extern \"C\" fn ")
            || line.starts_with("pub unsafe extern \"C\" fn ")
        {
            // Gather the signature up to the opening brace of the body.
            let mut sig = line.to_string();
            while !sig.trim_end().ends_with('{') {
                sig.push(' ');
                sig.push_str(lines.next().expect("signature").trim());
            }
            let after = sig.split_once("fn ").expect("fn").1;
            let (name, rest) = after.split_once('(').expect("parameters");
            let (plist, ret) = rest.rsplit_once(')').expect("parameters end");
            let ret = ret.trim().trim_end_matches('{').trim();
            let ret = ret.strip_prefix("->").map_or("void".to_string(), c_type);
            let ps = params(plist);
            let args = if ps.is_empty() {
                "void".to_string()
            } else {
                ps.iter()
                    .map(|(n, t)| format!("{} {n}", c_type(t)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            out += &comment(&docs, "");
            out += &format!("{} {}({});\n\n", ret, name.trim(), args).replace("* ", "*");
            // Skip the body.
            let mut depth = 1i32;
            for raw in lines.by_ref() {
                depth += raw.matches('{').count() as i32 - raw.matches('}').count() as i32;
                if depth == 0 {
                    break;
                }
            }
        } else {
            panic!("unexpected top-level line in the C API section: `{line}`");
        }
        docs.clear();
    }
    out.push_str("#ifdef __cplusplus\n}\n#endif\n\n#endif /* LANGEVIN_H */\n");
    out
}

#[test]
fn committed_header_matches_the_source() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(dir.join("src/lib.rs")).unwrap();
    let header = generate(&source);
    let path = dir.join("include/langevin.h");
    if std::env::var_os("LANGEVIN_BLESS").is_some() {
        std::fs::write(&path, &header).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == header,
        "include/langevin.h is out of date; run LANGEVIN_BLESS=1 cargo test -p langevin-ffi --test header"
    );
}
