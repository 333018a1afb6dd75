// A GCC plugin: check mode's instrumentation as a compiler pass that the inliner runs before,
// so the checks it calls are compiled into the kernel's own code (an experiment; see README.md).
//
// After the early optimisations' first redundancy elimination (fre1: a[i] read twice is one load
// by then, as ThreadSanitizer's late pass sees it) and before the IPA inliner, every load and
// store whose address comes from a pointer (not a local or global variable of its own: those are
// never device or shared memory) gets a call before it:
//     __gpubook_chk(address, bytes, flags, site)
// with `site` a number per access of this translation unit (the checks keep per-site state: the
// buffer it hit last, its warp's lanes for the access counts) and `flags` write / volatile. The
// callee is an always_inline function the included header defines; functions marked
// `no_instrument_function` (the header's own, the block loop) are left alone. A second pass,
// after the IPA inliner, folds the header's `__gpubook_maybe_device(p)` (-DDEVICE_TEST): false
// for a local's address, else the arena's range test (README.md, "Dropping a local's inlined
// check").
#include "gcc-plugin.h"
#include "plugin-version.h"

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
#include "attribs.h"
#include "cgraph.h"
#include "stor-layout.h"
#include "diagnostic-core.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "varasm.h"
#include "fold-const.h"
#include "gimple-fold.h"

int plugin_is_GPL_compatible; // GCC loads only plugins that say so (this project: MIT OR Apache-2.0)

namespace {

unsigned g_sites = 0; // access sites numbered across the translation unit

const pass_data kPassData = {
    GIMPLE_PASS, "gpubook_checks", OPTGROUP_NONE, TV_NONE, PROP_cfg, 0, 0, 0, 0,
};

// A reference that may be device or shared memory: one through a pointer.
bool through_pointer(tree ref) {
    tree base = get_base_address(ref);
    return base && (TREE_CODE(base) == MEM_REF || TREE_CODE(base) == TARGET_MEM_REF);
}

bool bit_field(tree ref) {
    return TREE_CODE(ref) == COMPONENT_REF && DECL_BIT_FIELD(TREE_OPERAND(ref, 1));
}

struct checks_pass : gimple_opt_pass {
    tree chk = NULL_TREE;
    explicit checks_pass(gcc::context* ctx) : gimple_opt_pass(kPassData, ctx) {}

    bool gate(function* fun) override {
        return !lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fun->decl));
    }

    tree callee() {
        if (chk) return chk;
        symtab_node* n = symtab_node::get_for_asmname(get_identifier("__gpubook_chk"));
        if (!n) fatal_error(UNKNOWN_LOCATION, "gpubook_checks: the header defines no __gpubook_chk");
        chk = n->decl;
        return chk;
    }

    void instrument(gimple_stmt_iterator* gsi, tree ref, bool write) {
        if (bit_field(ref)) return;
        HOST_WIDE_INT n = int_size_in_bytes(TREE_TYPE(ref));
        if (n <= 0) return;
        gimple* s = gsi_stmt(*gsi);
        tree addr = fold_convert(ptr_type_node, build_fold_addr_expr(unshare_expr(ref)));
        addr = force_gimple_operand_gsi(gsi, addr, true, NULL_TREE, true, GSI_SAME_STMT);
        unsigned flags = (write ? 1u : 0u) | (TREE_THIS_VOLATILE(ref) ? 2u : 0u);
        gcall* call = gimple_build_call(callee(), 4, addr,
                                        build_int_cst(long_unsigned_type_node, n),
                                        build_int_cst(unsigned_type_node, flags),
                                        build_int_cst(unsigned_type_node, g_sites++));
        gimple_set_location(call, gimple_location(s));
        gsi_insert_before(gsi, call, GSI_SAME_STMT);
    }

    unsigned execute(function* fun) override {
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
                gimple* s = gsi_stmt(gsi);
                if (!is_gimple_assign(s) || gimple_clobber_p(s)) continue;
                tree lhs = gimple_assign_lhs(s);
                if (gimple_assign_single_p(s)) {
                    tree rhs = gimple_assign_rhs1(s);
                    if (!is_gimple_reg(rhs) && !is_gimple_min_invariant(rhs) && REFERENCE_CLASS_P(rhs) && through_pointer(rhs))
                        instrument(&gsi, rhs, false);
                }
                if (REFERENCE_CLASS_P(lhs) && through_pointer(lhs)) instrument(&gsi, lhs, true);
            }
        }
        // The calls need virtual operands (they write memory): let the pass manager rename them.
        mark_virtual_operands_for_renaming(fun);
        return TODO_update_ssa;
    }
    opt_pass* clone() override { return new checks_pass(m_ctxt); }
};

// After the IPA inliner (after its first fre): every `__gpubook_maybe_device(p)` the inlined checks begin
// with becomes `false` when `p` is a local's address (a check a callee brought along, of its
// `this` or a reference parameter that turned out to be the caller's local: the dead check then
// goes, and the local can live in a register again), else the arena's range test,
// `(uintptr_t)p - gpubook_arena_lo < gpubook_arena_bytes`, written out here.
const pass_data kDevicePassData = {
    GIMPLE_PASS, "gpubook_device", OPTGROUP_NONE, TV_NONE, PROP_ssa | PROP_cfg, 0, 0, 0, 0,
};

bool points_to_a_local(tree p) {
    if (TREE_CODE(p) == ADDR_EXPR) {
        tree base = get_base_address(TREE_OPERAND(p, 0));
        return base && DECL_P(base) && !is_global_var(base);
    }
    return TREE_CODE(p) == SSA_NAME && POINTER_TYPE_P(TREE_TYPE(p)) && SSA_NAME_PTR_INFO(p) &&
           !ptr_deref_may_alias_global_p(p, false);
}

// The worker's `uintptr_t NAME` (the experiment's main.cpp defines them), declared here when the
// translation unit never named it.
tree global_named(const char* name) {
    if (varpool_node* v = varpool_node::get_for_asmname(get_identifier(name))) return v->decl;
    tree decl = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier(name), pointer_sized_int_node);
    TREE_PUBLIC(decl) = 1;
    DECL_EXTERNAL(decl) = 1;
    varpool_node::get_create(decl);
    return decl;
}

struct device_pass : gimple_opt_pass {
    explicit device_pass(gcc::context* ctx) : gimple_opt_pass(kDevicePassData, ctx) {}
    bool gate(function* fun) override { return fun->after_inlining; }
    unsigned execute(function* fun) override {
        unsigned folded = 0;
        basic_block bb;
        FOR_EACH_BB_FN(bb, fun) {
            for (gimple_stmt_iterator gsi = gsi_start_bb(bb); !gsi_end_p(gsi); gsi_next(&gsi)) {
                gimple* s = gsi_stmt(gsi);
                tree fn = is_gimple_call(s) ? gimple_call_fndecl(s) : NULL_TREE;
                if (!fn || strcmp(IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn)), "__gpubook_maybe_device")) continue;
                tree lhs = gimple_call_lhs(s), p = gimple_call_arg(s, 0);
                folded++;
                if (!lhs) {
                    gsi_replace(&gsi, gimple_build_nop(), true);
                    continue;
                }
                tree type = TREE_TYPE(lhs), uptr = pointer_sized_int_node;
                if (points_to_a_local(p)) {
                    gsi_replace(&gsi, gimple_build_assign(lhs, build_zero_cst(type)), true);
                    continue;
                }
                gimple_seq seq = NULL;
                tree a = gimple_convert(&seq, uptr, p);
                tree lo_val = make_ssa_name(uptr), bytes_val = make_ssa_name(uptr);
                gimple_seq_add_stmt(&seq, gimple_build_assign(lo_val, global_named("gpubook_arena_lo")));
                gimple_seq_add_stmt(&seq, gimple_build_assign(bytes_val, global_named("gpubook_arena_bytes")));
                tree off = gimple_build(&seq, MINUS_EXPR, uptr, a, lo_val);
                tree in = gimple_build(&seq, LT_EXPR, boolean_type_node, off, bytes_val);
                in = gimple_convert(&seq, type, in);
                gsi_insert_seq_before(&gsi, seq, GSI_SAME_STMT);
                gsi_replace(&gsi, gimple_build_assign(lhs, in), true);
            }
        }
        if (!folded) return 0;
        mark_virtual_operands_for_renaming(fun);
        return TODO_update_ssa | TODO_update_address_taken | TODO_cleanup_cfg;
    }
    opt_pass* clone() override { return new device_pass(m_ctxt); }
};

} // namespace

int plugin_init(plugin_name_args* info, plugin_gcc_version* version) {
    if (!plugin_default_version_check(version, &gcc_version)) {
        error("gpubook_checks: built for GCC %s, loaded by %s", gcc_version.basever, version->basever);
        return 1;
    }
    register_pass_info pass;
    pass.pass = new checks_pass(g);
    pass.reference_pass_name = "fre"; // its first instance, in the early optimisations
    pass.ref_pass_instance_number = 1;
    pass.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, nullptr, &pass);
    register_pass_info device;
    device.pass = new device_pass(g);
    // After every fre (instance numbers are not known yet when plugins register); the gate keeps
    // the runs before the IPA inliner out, and after the first run there is nothing left to fold.
    device.reference_pass_name = "fre";
    device.ref_pass_instance_number = 0;
    device.pos_op = PASS_POS_INSERT_AFTER;
    register_callback(info->base_name, PLUGIN_PASS_MANAGER_SETUP, nullptr, &device);
    return 0;
}
