// Context switch for x86_64 (System V ABI). See fiber.h.
#if defined(__x86_64__)
    .text

// void gpubook_fiber_switch(void** save_sp /* rdi */, void* to_sp /* rsi */)
    .globl gpubook_fiber_switch
    .type gpubook_fiber_switch, @function
gpubook_fiber_switch:
    // The callee-saved registers; everything else the caller already assumes clobbered.
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size gpubook_fiber_switch, .-gpubook_fiber_switch

// First code a fresh fiber runs: fiber_prepare left entry in r12 and its argument in r13.
    .globl gpubook_fiber_bootstrap
    .type gpubook_fiber_bootstrap, @function
gpubook_fiber_bootstrap:
    movq %r13, %rdi
    xorl %ebp, %ebp        // ends frame-pointer walks here
    callq *%r12
    ud2                    // entry never returns
    .size gpubook_fiber_bootstrap, .-gpubook_fiber_bootstrap
#endif
    .section .note.GNU-stack,"",@progbits
