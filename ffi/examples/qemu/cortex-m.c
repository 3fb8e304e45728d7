/*
 * Start-up code and system calls for running the C examples on QEMU's Cortex-M boards
 * (lm3s6965evb for the Cortex-M3 and, with -cpu cortex-m0, the Cortex-M0; mps2-an386 for the
 * Cortex-M4F) with semihosting: output goes to QEMU's standard output and main's return value
 * becomes QEMU's exit status. Link with cortex-m.ld, -nostartfiles and newlib's nosys specs.
 * On a real board, use the vendor's start-up code and a UART instead.
 */
#include <stddef.h>
#include <stdint.h>

extern int main(void);
extern void exit(int status);

extern uint32_t _sidata[], _sdata[], _edata[], _sbss[], _ebss[], _estack[];

/* One semihosting call: operation in r0, parameter block in r1, result in r0. */
static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* SYS_EXIT_EXTENDED (0x20) with ADP_Stopped_ApplicationExit: QEMU exits with `status`. */
void _exit(int status) {
    const uint32_t block[2] = {0x20026u, (uint32_t)status};
    semihost(0x20, block);
    for (;;) {
    }
}

/* newlib's output: every stream goes to the host's console (SYS_WRITEC, 0x03). */
int _write(int fd, const char *buf, int len) {
    int i;
    (void)fd;
    for (i = 0; i < len; i++) {
        semihost(0x03, &buf[i]);
    }
    return len;
}

void reset_handler(void) {
    uint32_t *src = _sidata, *dst = _sdata;
#if defined(__ARM_FP)
    /* Full access to the FPU (CP10 and CP11 in the CPACR) before any floating-point code. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    while (dst < _edata) {
        *dst++ = *src++;
    }
    for (dst = _sbss; dst < _ebss; dst++) {
        *dst = 0;
    }
    exit(main());
}

static void fault_handler(void) {
    _exit(99);
}

/* Initial stack pointer, reset, NMI, hard fault. */
__attribute__((section(".vectors"), used)) static void (*const vectors[4])(void) = {
    (void (*)(void))_estack,
    reset_handler,
    fault_handler,
    fault_handler,
};
