/* The one declaration of <stdio.h> the examples use, for a RISC-V build without a C library
 * (riscv.c implements it over semihosting). */
#ifndef LANGEVIN_QEMU_STDIO_H
#define LANGEVIN_QEMU_STDIO_H
int printf(const char *format, ...);
#endif
