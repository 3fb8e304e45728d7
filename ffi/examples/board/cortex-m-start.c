/*
 * The least start-up code that runs a hosted-style C program (main, printf, exit) on a bare
 * Cortex-M under QEMU: a vector table at address 0 and a reset handler that enables the FPU
 * (Cortex-M4F) and enters newlib's semihosting start-up (rdimon's _start sets up the stack,
 * clears .bss, calls main and exits with its status through semihosting).
 *
 * Build with --specs=rdimon.specs, -Wl,--section-start=.vectors=0 and -Wl,-u,cortex_m_vectors
 * (scripts/firmware.sh does).
 * A real firmware project uses its vendor's start-up code and linker script instead.
 */
#include <stdint.h>

extern void _start(void);

static void reset(void) {
#if defined(__ARM_FP)
    /* CPACR: full access to CP10 and CP11 before any floating-point instruction. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm volatile("dsb\n\tisb");
#endif
    _start();
    for (;;) {
    }
}

static void fault(void) {
    for (;;) {
    }
}

/* Initial stack pointer (top of the board's RAM at 0x20000000, 4 MiB) and handlers. */
__attribute__((section(".vectors"), used)) const uintptr_t cortex_m_vectors[16] = {
    0x20400000u, (uintptr_t)reset, (uintptr_t)fault, (uintptr_t)fault,
    (uintptr_t)fault, (uintptr_t)fault, (uintptr_t)fault, 0, 0, 0, 0,
    (uintptr_t)fault, (uintptr_t)fault, 0, (uintptr_t)fault, (uintptr_t)fault,
};
