// Context switch for aarch64 (AAPCS64). See fiber.h.
#if defined(__aarch64__)
    .text

// void gpubook_fiber_switch(void** save_sp /* x0 */, void* to_sp /* x1 */)
    .globl gpubook_fiber_switch
    .type gpubook_fiber_switch, %function
gpubook_fiber_switch:
    // Callee-saved: x19-x28, the frame pointer x29, the link register x30, and d8-d15.
    sub sp, sp, #160
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mov x2, sp
    str x2, [x0]
    mov sp, x1
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #160
    ret
    .size gpubook_fiber_switch, .-gpubook_fiber_switch

// First code a fresh fiber runs: fiber_prepare left entry in x19 and its argument in x20.
    .globl gpubook_fiber_bootstrap
    .type gpubook_fiber_bootstrap, %function
gpubook_fiber_bootstrap:
    mov x0, x20
    mov x29, #0
    blr x19
    brk #0
    .size gpubook_fiber_bootstrap, .-gpubook_fiber_bootstrap
#endif
    .section .note.GNU-stack,"",%progbits
