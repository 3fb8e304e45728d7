/*
 * Start-up code and a small printf for running the C examples on QEMU's RISC-V `virt` board
 * (`-bios none`, RAM at 0x8000_0000) with semihosting, without a C library: output goes to
 * QEMU's standard output and main's return value becomes QEMU's exit status. Build with
 * -ffreestanding -nostdlib, riscv-include/ on the include path, riscv.ld, and libgcc.
 * printf knows only what the examples print: %s, %c, %d, %u, %ld, %lu, %.Nf and %%.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern int main(void);
extern char __bss_start[], __bss_end[], __global_pointer$[];

/* One semihosting call: operation in a0, parameter in a1, result in a0. The three
 * instructions must be uncompressed and in this order for the host to see the call. */
static long semihost(long op, const void *arg) {
    register long a0 __asm__("a0") = op;
    register const void *a1 __asm__("a1") = arg;
    __asm__ volatile(".option push\n\t"
                     ".option norvc\n\t"
                     ".balign 16\n\t"
                     "slli x0, x0, 0x1f\n\t"
                     "ebreak\n\t"
                     "srai x0, x0, 7\n\t"
                     ".option pop"
                     : "+r"(a0)
                     : "r"(a1)
                     : "memory");
    return a0;
}

/* SYS_EXIT_EXTENDED (0x20) with ADP_Stopped_ApplicationExit: QEMU exits with `status`. */
static void __attribute__((noreturn)) exit_with(int status) {
    const uint32_t block[2] = {0x20026u, (uint32_t)status};
    semihost(0x20, block);
    for (;;) {
    }
}

static void put(char c) {
    semihost(0x03, &c); /* SYS_WRITEC */
}

static void put_str(const char *s) {
    while (*s) {
        put(*s++);
    }
}

static void put_unsigned(unsigned long long v) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n) {
        put(digits[--n]);
    }
}

/* `x` with `precision` decimals, rounded to nearest. */
static void put_fixed(double x, int precision) {
    unsigned long long scale = 1, whole, frac;
    int i;
    if (x != x) {
        put_str("nan");
        return;
    }
    if (x < 0) {
        put('-');
        x = -x;
    }
    for (i = 0; i < precision; i++) {
        scale *= 10;
    }
    frac = (unsigned long long)(x * (double)scale + 0.5);
    whole = frac / scale;
    frac %= scale;
    put_unsigned(whole);
    if (precision > 0) {
        put('.');
        for (scale /= 10; scale > frac && scale > 1; scale /= 10) {
            put('0');
        }
        put_unsigned(frac);
    }
}

int printf(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    for (; *format; format++) {
        int precision = 6, is_long = 0;
        long long s;
        if (*format != '%') {
            put(*format);
            continue;
        }
        format++;
        if (*format == '.') {
            precision = 0;
            for (format++; *format >= '0' && *format <= '9'; format++) {
                precision = precision * 10 + (*format - '0');
            }
        }
        if (*format == 'l') {
            is_long = 1;
            format++;
        }
        switch (*format) {
        case 's':
            put_str(va_arg(ap, const char *));
            break;
        case 'c':
            put((char)va_arg(ap, int));
            break;
        case 'd':
            s = is_long ? va_arg(ap, long) : va_arg(ap, int);
            if (s < 0) {
                put('-');
                s = -s;
            }
            put_unsigned((unsigned long long)s);
            break;
        case 'u':
            put_unsigned(is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned));
            break;
        case 'f':
            put_fixed(va_arg(ap, double), precision);
            break;
        case '%':
            put('%');
            break;
        default:
            put('?');
            break;
        }
        if (!*format) {
            break;
        }
    }
    va_end(ap);
    return 0;
}

void __attribute__((noreturn, used)) start_c(void) {
    char *p;
    for (p = __bss_start; p < __bss_end; p++) {
        *p = 0;
    }
    exit_with(main());
}

/* Entry: the global and stack pointers, then C. A trap ends the run with status 99. */
__asm__(".section .text.start, \"ax\"\n"
        ".globl _start\n"
        "_start:\n"
        ".option push\n"
        ".option norelax\n"
        ".option arch, +zicsr\n"
        "  la gp, __global_pointer$\n"
        "  la sp, _estack\n"
        "  la t0, trap\n"
        "  csrw mtvec, t0\n"
        ".option pop\n"
        "  j start_c\n"
        ".balign 4\n"
        "trap:\n"
        "  li a0, 99\n"
        "  j trap_exit\n");

void __attribute__((noreturn, used)) trap_exit(int status) {
    exit_with(status);
}
