//! GenVM result encodings: what sub-VMs and modules hand back to their caller.
//!
//! Tools that test, replay or audit GenVM contracts have to read these results
//! exactly as GenVM writes them, and refuse anything else, since the bytes feed
//! consensus hashes. [`SubVmResult`] reads `[result_code][data]` blobs,
//! [`ModuleResult`] the Calldata `{"ok": ...}` / `{"error": ...}` answers of
//! modules with each operation's answer shape, and [`VmError`] validates VM-error
//! strings against GenVM's `vm_error` trie. Calldata itself lives in
//! [`crate::calldata`].

mod module_result;
mod sub_vm;
mod vm_error;

pub use module_result::{ModuleAnswer, ModuleResult, ModuleResultError, Operation, WebResponse};
pub use sub_vm::{
    RESULT_CODE_RETURN, RESULT_CODE_USER_ERROR, RESULT_CODE_VM_ERROR, SubVmResult, SubVmResultError,
};
pub use vm_error::{
    ParamKind, VM_ERROR_TRIE, VM_ERROR_TRIE_V0_1_8, VmError, VmErrorParam, VmErrorRefusal,
    Vocabulary,
};
