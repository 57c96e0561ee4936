//! Executing one vector (one variant of it) on ref-fvm.
//!
//! The machine is built as the vector says: its epoch, network version, base
//! fee (100 attoFIL when absent, as lotus' conformance driver assumes) and
//! circulating supply (ref-fvm's total supply when absent), the pre-state
//! root, externs replaying the recorded randomness and a kernel that takes
//! proofs as valid. The timestamp is `epoch * 30` (mainnet's block time; the
//! format records none). Messages are applied in order; a message from the
//! system actor (`f00`) is applied as an implicit message, every other one as
//! an explicit message whose on-chain size is what lotus charges inclusion
//! gas for: the message's bytes, plus its signature for a secp256k1 sender
//! (BLS signatures travel aggregated in the block). When a message's epoch
//! differs from the one before it, the state is flushed and a new machine is
//! built at the new epoch. Compiled actor code is cached across vectors.

use crate::bundle::BundleSet;
use crate::externs::{VectorExterns, parse_randomness};
use crate::kernel::TrustedProofsKernel;
use crate::store::VectorStore;
use crate::trace;
use cid::Cid;
use fvm::DefaultKernel;
use fvm::call_manager::DefaultCallManager;
use fvm::engine::MultiEngine;
use fvm::executor::{ApplyKind, ApplyRet, DefaultExecutor, Executor as _};
use fvm::machine::{DefaultMachine, Machine as _, NetworkConfig};
use fvm::state_tree::StateTree;
use fvm_ipld_blockstore::Blockstore as _;
use fvm_shared::address::{Address, Protocol};
use fvm_shared::bigint::BigInt;
use fvm_shared::clock::ChainEpoch;
use fvm_shared::econ::TokenAmount;
use fvm_shared::message::Message;
use fvm_shared::version::NetworkVersion;
use geist_vectors::car::CarArchive;
use geist_vectors::driver::DriverRequest;
use geist_vectors::payload::decode_base64;
use std::ops::RangeInclusive;
use std::rc::Rc;
use std::str::FromStr as _;

/// The network versions ref-fvm 3.14 executes (its machine refuses others).
pub const SUPPORTED_NETWORK_VERSIONS: RangeInclusive<u32> = 18..=20;

/// Base fee when the vector gives none, in attoFIL (lotus' conformance default).
pub const DEFAULT_BASE_FEE: u64 = 100;

/// Seconds between epochs on mainnet; the machine's timestamp is `epoch * BLOCK_DELAY_SECONDS`.
pub const BLOCK_DELAY_SECONDS: u64 = 30;

/// Bytes a secp256k1 signature adds to a message on chain: a signed message
/// is the CBOR pair `[message, signature]` (1 byte of array header), the
/// signature a byte string of 66 bytes (2 bytes of header, 1 byte of
/// signature type, 65 bytes of signature).
pub const SECP_SIGNATURE_OVERHEAD: usize = 1 + 2 + 1 + 65;

type VectorMachine = DefaultMachine<Rc<VectorStore>, VectorExterns>;
type VectorKernel = TrustedProofsKernel<DefaultKernel<DefaultCallManager<VectorMachine>>>;

/// The receipt of one applied message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecutedReceipt {
    /// The exit code.
    pub exit_code: u32,
    /// The return bytes.
    pub return_data: Vec<u8>,
    /// Gas used.
    pub gas_used: u64,
}

/// What executing a vector produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// One receipt per message.
    pub receipts: Vec<ExecutedReceipt>,
    /// The state root after the last message, flushed.
    pub post_state_root: Cid,
    /// One trace per message, when asked for.
    pub traces: Option<Vec<Vec<String>>>,
}

/// How a request ended, short of an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Executed.
    Executed(Execution),
    /// Not executed, for this reason (unsupported network version, missing bundle, ...).
    Skipped(String),
}

/// Why a vector could not be executed.
#[derive(Debug, thiserror::Error)]
pub enum ExecuteError {
    /// A request field is missing or malformed.
    #[error("request field {field}: {reason}")]
    Request {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The pre-state cannot be read far enough to find its actors.
    #[error("pre-state {root}: {reason}")]
    PreState {
        /// The pre-state root.
        root: Cid,
        /// What is missing.
        reason: String,
    },
    /// A message is not a Filecoin message.
    #[error("message {index}: not a message: {reason}")]
    Message {
        /// The message's position.
        index: usize,
        /// The decoder's explanation.
        reason: String,
    },
    /// The VM failed (a fatal error, not a receipt with a non-zero exit code).
    #[error("{stage}: {source:#}")]
    Vm {
        /// What the VM was doing: building the machine, applying message N, flushing.
        stage: String,
        /// ref-fvm's error.
        source: anyhow::Error,
    },
}

fn request_error(field: &'static str, reason: impl std::fmt::Display) -> ExecuteError {
    ExecuteError::Request {
        field,
        reason: reason.to_string(),
    }
}

fn vm_error(stage: impl Into<String>) -> impl FnOnce(anyhow::Error) -> ExecuteError {
    let stage = stage.into();
    move |source| ExecuteError::Vm { stage, source }
}

/// The VM: the loaded bundles and the engines that compile and cache actor code.
pub struct Vm {
    bundles: BundleSet,
    engines: MultiEngine,
}

/// One message to apply.
struct PendingMessage {
    message: Message,
    epoch: ChainEpoch,
    kind: ApplyKind,
    raw_length: usize,
}

impl Vm {
    /// A VM over these bundles.
    pub fn new(bundles: BundleSet) -> Vm {
        Vm {
            bundles,
            // One execution at a time: the protocol answers requests in order.
            engines: MultiEngine::new(1),
        }
    }

    /// The loaded bundles.
    pub fn bundles(&self) -> &BundleSet {
        &self.bundles
    }

    /// Executes one request, or says why it is skipped.
    pub fn execute(&self, request: &DriverRequest) -> Result<Outcome, ExecuteError> {
        if request.class != "message" {
            return Ok(Outcome::Skipped(format!(
                "class {}: this driver applies message-class vectors only",
                request.class
            )));
        }
        if let Some(reason) = unsupported_selector(request.selector.as_ref()) {
            return Ok(Outcome::Skipped(reason));
        }
        let Some(nv) = request.network_version else {
            return Ok(Outcome::Skipped(
                "the vector names no network version (no variants)".to_string(),
            ));
        };
        let nv = match u32::try_from(nv) {
            Ok(nv) if SUPPORTED_NETWORK_VERSIONS.contains(&nv) => nv,
            _ => {
                return Ok(Outcome::Skipped(format!(
                    "network version {nv}: ref-fvm 3.x executes network versions {} to {}",
                    SUPPORTED_NETWORK_VERSIONS.start(),
                    SUPPORTED_NETWORK_VERSIONS.end()
                )));
            }
        };
        let epoch = request
            .epoch
            .ok_or_else(|| request_error("epoch", "absent"))?;
        let base_fee = token_amount(request.base_fee.as_deref(), "base_fee")?
            .unwrap_or_else(|| TokenAmount::from_atto(DEFAULT_BASE_FEE));
        let circ_supply = token_amount(request.circ_supply.as_deref(), "circ_supply")?;
        let draws = parse_randomness(request.randomness.as_ref())
            .map_err(|e| request_error("randomness", e))?;
        let messages = pending_messages(request, epoch)?;
        let store = Rc::new(VectorStore::new(self.bundles.blocks.clone()));
        let car = decode_base64(&request.car, "car").map_err(|e| request_error("car", e))?;
        let car = CarArchive::parse(&car).map_err(|e| request_error("car", e))?;
        for block in car.blocks {
            store.insert(block.cid, block.data);
        }
        let pre_state_root = request
            .pre_state_root
            .as_deref()
            .ok_or_else(|| request_error("pre_state_root", "absent"))?;
        let mut root = Cid::from_str(pre_state_root)
            .map_err(|e| request_error("pre_state_root", format!("not a CID: {e}")))?;
        if let Some(reason) = self.missing_bundle(&store, root)? {
            return Ok(Outcome::Skipped(reason));
        }

        let network = NetworkConfig::new(NetworkVersion::from(nv));
        let engine = self
            .engines
            .get(&network)
            .map_err(vm_error("starting the Wasm engine"))?;
        let mut receipts = Vec::with_capacity(messages.len());
        let mut traces = request.trace.then(Vec::new);
        let mut index = 0;
        while index < messages.len() {
            let segment_epoch = messages[index].epoch;
            let mut context = network.for_epoch(
                segment_epoch,
                u64::try_from(segment_epoch).unwrap_or(0) * BLOCK_DELAY_SECONDS,
                root,
            );
            context.set_base_fee(base_fee.clone());
            if let Some(supply) = &circ_supply {
                context.set_circulating_supply(supply.clone());
            }
            context.tracing = request.trace;
            let externs = VectorExterns::new(draws.clone());
            let machine = VectorMachine::new(&context, store.clone(), externs).map_err(
                vm_error(format!("building the machine at epoch {segment_epoch}")),
            )?;
            let mut executor = DefaultExecutor::<VectorKernel>::new(engine.clone(), machine)
                .map_err(vm_error("loading the actors' code"))?;
            while index < messages.len() && messages[index].epoch == segment_epoch {
                let pending = &messages[index];
                let ret: ApplyRet = executor
                    .execute_message(pending.message.clone(), pending.kind, pending.raw_length)
                    .map_err(vm_error(format!("applying message {index}")))?;
                if let Some(traces) = traces.as_mut() {
                    traces.push(trace::render(&ret, &executor.externs().take_misses()));
                }
                receipts.push(ExecutedReceipt {
                    exit_code: ret.msg_receipt.exit_code.value(),
                    return_data: ret.msg_receipt.return_data.to_vec(),
                    gas_used: ret.msg_receipt.gas_used,
                });
                index += 1;
            }
            root = executor
                .flush()
                .map_err(vm_error("flushing the state tree"))?;
        }
        Ok(Outcome::Executed(Execution {
            receipts,
            post_state_root: root,
            traces,
        }))
    }

    /// Why the pre-state's actors cannot run here, if they cannot: the bundle
    /// its system actor names is not loaded.
    fn missing_bundle(
        &self,
        store: &Rc<VectorStore>,
        root: Cid,
    ) -> Result<Option<String>, ExecuteError> {
        let pre_state = |reason: String| ExecuteError::PreState { root, reason };
        if !store.has(&root).unwrap_or(false) {
            return Err(pre_state("not in the CAR".to_string()));
        }
        let tree = StateTree::new_from_root(store.clone(), &root)
            .map_err(|e| pre_state(format!("not a state tree: {e}")))?;
        let system = tree
            .get_actor(0)
            .map_err(|e| pre_state(format!("system actor f00 unreadable: {e}")))?
            .ok_or_else(|| pre_state("no system actor f00".to_string()))?;
        let state = store.get(&system.state).ok().flatten().ok_or_else(|| {
            pre_state(format!(
                "system actor state {} not in the CAR",
                system.state
            ))
        })?;
        let (actors,): (Cid,) = fvm_ipld_encoding::from_slice(&state)
            .map_err(|e| pre_state(format!("system actor state is not [builtin_actors]: {e}")))?;
        Ok(self.bundles.find(&actors).is_none().then(|| {
            format!(
                "missing bundle: the pre-state's actors {actors} are in none of the loaded bundles ({})",
                self.bundles.describe()
            )
        }))
    }
}

/// Why a vector's selector asks for something this driver lacks, if it does.
fn unsupported_selector(selector: Option<&serde_json::Value>) -> Option<String> {
    let selector = selector?;
    let wants = |key: &str| selector.get(key).and_then(|v| v.as_str()) == Some("true");
    if wants("chaos_actor") {
        return Some("selector chaos_actor: the chaos actor is in no released bundle".to_string());
    }
    if wants("requires:consensus_fault_extern") {
        return Some(
            "selector requires:consensus_fault_extern: judging consensus faults needs block headers the vector does not carry"
                .to_string(),
        );
    }
    None
}

fn token_amount(
    text: Option<&str>,
    field: &'static str,
) -> Result<Option<TokenAmount>, ExecuteError> {
    text.map(|text| {
        BigInt::from_str(text)
            .map(TokenAmount::from_atto)
            .map_err(|e| request_error(field, format!("{text:?} is not a decimal integer: {e}")))
    })
    .transpose()
}

fn pending_messages(
    request: &DriverRequest,
    epoch: ChainEpoch,
) -> Result<Vec<PendingMessage>, ExecuteError> {
    let system_actor = Address::new_id(0);
    request
        .messages
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let bytes =
                decode_base64(&item.bytes, "messages").map_err(|e| ExecuteError::Message {
                    index,
                    reason: e.to_string(),
                })?;
            let message: Message =
                fvm_ipld_encoding::from_slice(&bytes).map_err(|e| ExecuteError::Message {
                    index,
                    reason: e.to_string(),
                })?;
            let (kind, raw_length) = if message.from == system_actor {
                (ApplyKind::Implicit, bytes.len())
            } else if message.from.protocol() == Protocol::Secp256k1 {
                (ApplyKind::Explicit, bytes.len() + SECP_SIGNATURE_OVERHEAD)
            } else {
                (ApplyKind::Explicit, bytes.len())
            };
            Ok(PendingMessage {
                message,
                epoch: item.epoch.unwrap_or(epoch),
                kind,
                raw_length,
            })
        })
        .collect()
}
