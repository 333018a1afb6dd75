// A GCC plugin for check mode: the loads and stores of device and shared memory checked by code
// compiled into the kernel (device/check_inline.h), placed before the inliner, instead of
// ThreadSanitizer's hooks, which its pass places after every optimisation (DESIGN.md, "What
// check mode's speed is made of").
//
// Three passes:
// - gpubook_access, after the early optimisations' first redundancy elimination (fre1): before
//   every load and store through a pointer that is not volatile it calls
//   __gpubook_chk(address, bytes, flags, site), an always_inline function of check_inline.h,
//   with the flags the __tsan_readN / writeN hooks or, for an aggregate, an odd size or an access
//   the compiler cannot assume aligned, the range hooks would get, and `site` a number per access
//   of the translation unit (the inline checks keep per-site state). An access of a variable of
//   its own (a local, a global) is never device or shared memory and gets nothing; functions
//   marked no_instrument_function (check_inline.h's own, the block loop) get nothing.
// - gpubook_device, after the first redundancy elimination that follows the IPA inliner: the
//   inlined checks start with `__gpubook_maybe_device(p)`, which becomes false where p is a
//   local's address (a callee is instrumented before it is inlined, so a method of a local
//   brings checks of its `this`) or the function is one ThreadSanitizer leaves alone (a
//   kernel's entry, which unpacks the argument array), and true otherwise.
// - gpubook_untsan, after ThreadSanitizer's pass: deletes its calls for those kinds of access
//   (__tsan_readN / writeN, __tsan_read_range / write_range), which are now either checked by
//   the first pass or not device memory. Volatile accesses and atomics keep ThreadSanitizer's
//   hooks (a volatile read may be a thread waiting for a flag).
//
// compile.rs builds this with the module's own g++ when it has its plugin headers and passes
// -fplugin and -DGPUBOOK_CHECK_PASS to check-mode modules (a plugin loads only into the
// compiler it was built for).
#include "gcc-plugin.h"
#include "plugin-version.h"

// GCC's headers are not self-contained: this order works (tree.h before gimple.h ...).
#include "context.h"
#include "tree.h"
#include "tree-pass.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "gimplify-me.h"
#include "stringpool.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "builtins.h"
#include "attribs.h"
#include "asan.h"
#include "cgraph.h"
#include "diagnostic-core.h"

#include <map>

#include "../worker/access/checks.h"

int plugin_is_GPL_compatible; // GCC loads only plugins that say so (gpubook: MIT OR Apache-2.0)

namespace {

// The sizes ThreadSanitizer's hooks have a function for (the compiler assumes them aligned).
bool sized(HOST_WIDE_INT n) { return n == 1 || n == 2 || n == 4 || n == 8 || n == 16; }

// A bit-field is read and written as its representative, the bytes that hold it (as
// ThreadSanitizer's pass does).
tree accessed(tree ref) {
    if (TREE_CODE(ref) != COMPONENT_REF || !DECL_BIT_FIELD_TYPE(TREE_OPERAND(ref, 1))) return ref;
    tree repr = DECL_BIT_FIELD_REPRESENTATIVE(TREE_OPERAND(ref, 1));
    if (!repr) return NULL_TREE;
    return build3(COMPONENT_REF, TREE_TYPE(repr), TREE_OPERAND(ref, 0), repr, TREE_OPERAND(ref, 2));
}

unsigned g_sites = 0; // access sites, numbered across the translation unit

// Checks a function holds, with those of the functions it calls (instrumented before it, as
// callees come first): what `flatten` would inline into its caller.
std::map<tree, unsigned> g_checks_under;
constexpr unsigned kFlatChecks = 64;
// A kernel with locals this large keeps a frame of its own: a stack overflow is then reported at
// its line, not in the loop's prologue.
constexpr HOST_WIDE_INT kFlatLocalBytes = 64 * 1024;

HOST_WIDE_INT local_bytes(function* fun) {
    HOST_WIDE_INT total = 0;
    unsigned i;
    tree var;
    FOR_EACH_LOCAL_DECL(fun, i, var) {
        HOST_WIDE_INT n = VAR_P(var) && !TREE_STATIC(var) ? int_size_in_bytes(TREE_TYPE(var)) : 0;
        if (n > 0) total += n;
    }
    return total;
}

// A pointer that points only to locals, or the address of a local: never device memory.
bool points_to_a_local(tree p) {
    if (TREE_CODE(p) == ADDR_EXPR) {
        tree base = get_base_address(TREE_OPERAND(p, 0));
        return base && DECL_P(base) && !is_global_var(base);
    }
    return TREE_CODE(p) == SSA_NAME && POINTER_TYPE_P(TREE_TYPE(p)) && SSA_NAME_PTR_INFO(p) &&
           !ptr_deref_may_alias_global_p(p, false);
}

bool calls(const gimple* s, const char* name) {
    tree fn = is_gimple_call(s) ? gimple_call_fndecl(s) : NULL_TREE;
    return fn && !strcmp(IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn)), name);
}

// The function a call reaches (-fno-semantic-interposition calls a local alias).
tree target(tree fn) {
    cgraph_node* node = cgraph_node::get(fn);
    return node ? node->ultimate_alias_target()->decl : fn;
}

// Check mode's block loop (kernel_export.h, block_loop::threads) is `flatten`: the kernel and
// everything it calls are inlined into it, as in fast mode. With a check at every access that
// is too much for a kernel of many helpers (one took minutes to compile), so a loop whose
// kernel brings more than kFlatChecks checks along is not flattened. Callees are instrumented
// before their callers, so the loop has not been flattened yet (the early inliner does it).
void unflatten_loops_calling(tree kernel) {
    auto visit = [](cgraph_node* n) {
        for (cgraph_edge* e = n ? n->callers : nullptr; e; e = e->next_caller) {
            tree caller = e->caller->decl;
            const char* name = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(caller));
            if (strstr(name, "block_loop") && strstr(name, "threads"))
                DECL_ATTRIBUTES(caller) = remove_attribute("flatten", DECL_ATTRIBUTES(caller));
        }
    };
    cgraph_node* node = cgraph_node::get(kernel);
    if (!node) return;
    visit(node);
    ipa_ref* ref;
    FOR_EACH_ALIAS(node, ref) visit(dyn_cast<cgraph_node*>(ref->referring));
}

unsigned checks_under(function* fun) {
    unsigned n = 0;
    basic_block bb;
    FOR_EACH_BB_FN(bb, fun) {
        for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
            tree fn = is_gimple_call(gsi_stmt(gsi)) ? gimple_call_fndecl(gsi_stmt(gsi)) : NULL_TREE;
            if (!fn) continue;
            // A check inlined early still starts with its __gpubook_maybe_device call.
            if (calls(gsi_stmt(gsi), "__gpubook_chk") || calls(gsi_stmt(gsi), "__gpubook_maybe_device")) n++;
            else if (auto it = g_checks_under.find(target(fn)); it != g_checks_under.end()) n += it->second;
        }
    }
    return n;
}

// A check that a callee's body brought along when it was inlined early, whose pointer (its
// `this`, a reference parameter) turned out to be a local of the caller.
bool on_a_local(const gimple* s) { return calls(s, "__gpubook_chk") && points_to_a_local(gimple_call_arg(s, 0)); }

void remove(gimple_stmt_iterator* gsi) {
    gimple* s = gsi_stmt(*gsi);
    unlink_stmt_vdef(s);
    gsi_remove(gsi, true);
    release_defs(s);
}

const pass_data kAccessPass = {GIMPLE_PASS, "gpubook_access", OPTGROUP_NONE, TV_NONE, PROP_ssa | PROP_cfg, 0, 0, 0, 0};

struct access_pass : gimple_opt_pass {
    explicit access_pass(gcc::context* ctx) : gimple_opt_pass(kAccessPass, ctx) {}
    opt_pass* clone() override { return new access_pass(m_ctxt); }
    tree chk = NULL_TREE;
    // Where ThreadSanitizer instruments (not in a no_sanitize("thread") function: a kernel's
    // entry), except the checks' own code and the block loop's.
    bool gate(function* fun) override { return sanitize_flags_p(SANITIZE_THREAD, fun->decl); }

    tree callee() {
        if (chk) return chk;
        symtab_node* n = symtab_node::get_for_asmname(get_identifier("__gpubook_chk"));
        if (!n) fatal_error(UNKNOWN_LOCATION, "gpubook_access: no __gpubook_chk (check_inline.h) in this translation unit");
        chk = n->decl;
        return chk;
    }

    // Before the statement at `gsi`: the call for its access `ref`, when it is one we take.
    bool instrument(gimple_stmt_iterator* gsi, tree ref, bool write) {
        if (TREE_THIS_VOLATILE(ref)) return false;
        tree base = get_base_address(ref);
        if (!base || (TREE_CODE(base) != MEM_REF && TREE_CODE(base) != TARGET_MEM_REF)) return false;
        // A pointer that points only to locals (an inlined constructor's `this` before its
        // address is propagated): later passes make that a plain local, never device memory.
        tree ptr = TREE_OPERAND(base, 0);
        if (TREE_CODE(ptr) == SSA_NAME && SSA_NAME_PTR_INFO(ptr) && !ptr_deref_may_alias_global_p(ptr, false))
            return false;
        ref = accessed(ref);
        if (!ref) return false;
        HOST_WIDE_INT n = int_size_in_bytes(TREE_TYPE(ref));
        if (n <= 0) return false;
        unsigned flags = write ? gpubook::rt::kAccessWrite : 0;
        if (sized(n) && get_object_alignment(ref) >= unsigned(n) * BITS_PER_UNIT) flags |= gpubook::rt::kAccessAligned;
        // The address as a GIMPLE value: a conversion left inside the call breaks later passes.
        tree addr = fold_convert(ptr_type_node, build_fold_addr_expr(unshare_expr(ref)));
        addr = force_gimple_operand_gsi(gsi, addr, true, NULL_TREE, true, GSI_SAME_STMT);
        gcall* call = gimple_build_call(callee(), 4, addr, build_int_cst(long_unsigned_type_node, n),
                                        build_int_cst(unsigned_type_node, flags),
                                        build_int_cst(unsigned_type_node, g_sites++));
        gimple_set_location(call, gimple_location(gsi_stmt(*gsi)));
        gsi_insert_before(gsi, call, GSI_SAME_STMT);
        return true;
    }

    // A function's call of itself stays a call: an empty volatile asm after it keeps it out of
    // tail position, so -O2 does not turn a recursion into a loop (a recursion without a base
    // case is a stack overflow, as without the pass, not a hang), while the checks' own calls of
    // the worker stay sibling calls (their return address is then the checked access's line).
    static void keep_recursion(gimple* call) {
        gasm* barrier = gimple_build_asm_vec("", NULL, NULL, NULL, NULL);
        gimple_asm_set_volatile(barrier, true);
        gimple_stmt_iterator at = gsi_for_stmt(call);
        gsi_insert_after(&at, barrier, GSI_SAME_STMT);
    }

    unsigned execute(function* fun) override {
        // The checks' own code and the block loop get no checks.
        if (lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fun->decl))) return 0;
        bool any = false;
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);) {
                gimple* s = gsi_stmt(gsi);
                if (on_a_local(s)) {
                    remove(&gsi);
                    any = true;
                    continue;
                }
                gsi_next(&gsi);
                tree callee = is_gimple_call(s) ? gimple_call_fndecl(s) : NULL_TREE;
                if (callee && target(callee) == fun->decl) keep_recursion(s);
                if (!is_gimple_assign(s) || gimple_clobber_p(s)) continue;
                gimple_stmt_iterator at = gsi_for_stmt(s);
                if (gimple_assign_load_p(s)) any |= instrument(&at, gimple_assign_rhs1(s), false);
                if (gimple_store_p(s)) any |= instrument(&at, gimple_assign_lhs(s), true);
            }
        }
        unsigned checks = g_checks_under[fun->decl] = checks_under(fun);
        if (checks > kFlatChecks || local_bytes(fun) > kFlatLocalBytes) unflatten_loops_calling(fun->decl);
        if (!any) return 0;
        mark_virtual_operands_for_renaming(fun); // the calls write memory
        // A local whose checks went may live in registers again.
        return TODO_update_ssa | TODO_update_address_taken;
    }
};

const pass_data kDevicePass = {GIMPLE_PASS, "gpubook_device", OPTGROUP_NONE, TV_NONE, PROP_ssa | PROP_cfg, 0, 0, 0, 0};

struct device_pass : gimple_opt_pass {
    explicit device_pass(gcc::context* ctx) : gimple_opt_pass(kDevicePass, ctx) {}
    opt_pass* clone() override { return new device_pass(m_ctxt); }
    bool gate(function* fun) override { return fun->after_inlining; }
    unsigned execute(function* fun) override {
        bool sanitized = sanitize_flags_p(SANITIZE_THREAD, fun->decl);
        unsigned folded = 0;
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
                gimple* s = gsi_stmt(gsi);
                if (!calls(s, "__gpubook_maybe_device")) continue;
                folded++;
                tree lhs = gimple_call_lhs(s);
                if (!lhs) {
                    gsi_replace(&gsi, gimple_build_nop(), true);
                    continue;
                }
                bool maybe = sanitized && !points_to_a_local(gimple_call_arg(s, 0));
                tree value = maybe ? build_one_cst(TREE_TYPE(lhs)) : build_zero_cst(TREE_TYPE(lhs));
                gsi_replace(&gsi, gimple_build_assign(lhs, value), true);
            }
        }
        if (!folded) return 0;
        mark_virtual_operands_for_renaming(fun);
        // The dead checks go, and a local whose checks went may live in registers again.
        return TODO_update_ssa | TODO_update_address_taken | TODO_cleanup_cfg;
    }
};

// ThreadSanitizer's calls that gpubook_access took over.
bool taken_over(const gimple* s) {
    // Not gimple_call_builtin_p: it also compares the argument types, and ThreadSanitizer's pass
    // passes a range's size as sizetype, not the builtin's pointer-sized integer.
    tree fn = is_gimple_call(s) ? gimple_call_fndecl(s) : NULL_TREE;
    if (!fn || !fndecl_built_in_p(fn, BUILT_IN_NORMAL)) return false;
    switch (DECL_FUNCTION_CODE(fn)) {
    case BUILT_IN_TSAN_READ1: case BUILT_IN_TSAN_READ2: case BUILT_IN_TSAN_READ4: case BUILT_IN_TSAN_READ8:
    case BUILT_IN_TSAN_READ16: case BUILT_IN_TSAN_WRITE1: case BUILT_IN_TSAN_WRITE2: case BUILT_IN_TSAN_WRITE4:
    case BUILT_IN_TSAN_WRITE8: case BUILT_IN_TSAN_WRITE16: case BUILT_IN_TSAN_READ_RANGE:
    case BUILT_IN_TSAN_WRITE_RANGE:
        return true;
    default:
        return false;
    }
}

const pass_data kUntsanPass = {GIMPLE_PASS, "gpubook_untsan", OPTGROUP_NONE, TV_NONE, PROP_ssa | PROP_cfg, 0, 0, 0, 0};

struct untsan_pass : gimple_opt_pass {
    explicit untsan_pass(gcc::context* ctx) : gimple_opt_pass(kUntsanPass, ctx) {}
    opt_pass* clone() override { return new untsan_pass(m_ctxt); }
    unsigned execute(function* fun) override {
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi);) {
                if (taken_over(gsi_stmt(gsi))) remove(&gsi);
                else gsi_next(&gsi);
            }
        }
        return 0;
    }
};

void add_pass(const char* name, opt_pass* pass, const char* after, int instance) {
    register_pass_info info;
    info.pass = pass;
    info.reference_pass_name = after;
    info.ref_pass_instance_number = instance;
    info.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(name, PLUGIN_PASS_MANAGER_SETUP, nullptr, &info);
}

} // namespace

int plugin_init(plugin_name_args* info, plugin_gcc_version* version) {
    if (!plugin_default_version_check(version, &gcc_version)) return 1; // g++ says which plugin failed
    add_pass(info->base_name, new access_pass(g), "fre", 1); // the early optimisations' fre
    // After every fre (a plugin can name only the first instance or all); the gate keeps those
    // before the IPA inliner out, and after the first run nothing is left to fold.
    add_pass(info->base_name, new device_pass(g), "fre", 0);
    add_pass(info->base_name, new untsan_pass(g), "tsan", 1);
    return 0;
}
