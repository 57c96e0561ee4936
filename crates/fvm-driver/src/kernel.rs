//! The kernel vectors execute under: ref-fvm's default kernel, except that
//! proofs are taken as valid.
//!
//! Verifying a seal, a Window PoSt, an aggregate or a replica update needs
//! the Groth16 verifying keys of the Filecoin proof parameters, which a
//! vector does not carry and this machine cannot fetch. The messages of an
//! extracted vector were accepted on chain, so their proofs verified there:
//! [`TrustedProofsKernel`] charges exactly the gas the default kernel charges
//! for each verification (the price list's charge for it) and answers
//! "valid". The one place this is wrong is a message that *disputes* a proof
//! (`DisputeWindowedPoSt` that succeeded on chain, because the disputed proof
//! was invalid): such vectors fail here, and say why in the trace.
//! Consensus faults are answered "no fault" after the same charge: judging
//! one needs block headers and their signers, which a vector does not carry.
//! Everything else is forwarded unchanged.

use cid::Cid;
use cid::multihash::Multihash;
use fvm::Kernel;
use fvm::call_manager::CallManager;
use fvm::gas::{Gas, GasCharge, GasTimer, PriceList};
use fvm::kernel::{
    ActorOps, BlockId, BlockRegistry, BlockStat, CircSupplyOps, CryptoOps, DebugOps, EventOps,
    GasOps, IpldBlockOps, LimiterOps, MessageOps, NetworkOps, RandomnessOps, Result, SelfOps,
    SendResult,
};
use fvm_shared::address::Address;
use fvm_shared::clock::ChainEpoch;
use fvm_shared::consensus::ConsensusFault;
use fvm_shared::crypto::signature::{
    SECP_PUB_LEN, SECP_SIG_LEN, SECP_SIG_MESSAGE_HASH_SIZE, SignatureType,
};
use fvm_shared::econ::TokenAmount;
use fvm_shared::piece::PieceInfo;
use fvm_shared::randomness::RANDOMNESS_LENGTH;
use fvm_shared::sector::{
    AggregateSealVerifyProofAndInfos, RegisteredSealProof, ReplicaUpdateInfo, SealVerifyInfo,
    WindowPoStVerifyInfo,
};
use fvm_shared::sys::SendFlags;
use fvm_shared::sys::out::network::NetworkContext;
use fvm_shared::sys::out::vm::MessageContext;
use fvm_shared::{ActorID, MethodNum};

/// A kernel that forwards to `K` but takes every proof as valid (see the module doc).
pub struct TrustedProofsKernel<K>(pub K);

impl<K: GasOps> TrustedProofsKernel<K> {
    /// Charges what verifying would have cost, as the default kernel does.
    fn charge(&self, charge: GasCharge) -> Result<()> {
        let timer = self.0.charge_gas(&charge.name, charge.total())?;
        timer.stop();
        Ok(())
    }
}

impl<K: Kernel> Kernel for TrustedProofsKernel<K> {
    type CallManager = K::CallManager;

    fn into_inner(self) -> (Self::CallManager, BlockRegistry) {
        self.0.into_inner()
    }

    fn new(
        manager: Self::CallManager,
        blocks: BlockRegistry,
        caller: ActorID,
        actor_id: ActorID,
        method: MethodNum,
        value_received: TokenAmount,
        read_only: bool,
    ) -> Self {
        TrustedProofsKernel(K::new(
            manager,
            blocks,
            caller,
            actor_id,
            method,
            value_received,
            read_only,
        ))
    }

    fn machine(&self) -> &<Self::CallManager as CallManager>::Machine {
        self.0.machine()
    }

    fn send<Callee: Kernel<CallManager = Self::CallManager>>(
        &mut self,
        recipient: &Address,
        method: u64,
        params: BlockId,
        value: &TokenAmount,
        gas_limit: Option<Gas>,
        flags: SendFlags,
    ) -> Result<SendResult> {
        // The callee runs under this kernel too, whatever `Callee` the caller named.
        self.0
            .send::<Self>(recipient, method, params, value, gas_limit, flags)
    }
}

impl<K: CryptoOps + GasOps> CryptoOps for TrustedProofsKernel<K> {
    fn verify_signature(
        &self,
        sig_type: SignatureType,
        signature: &[u8],
        signer: &Address,
        plaintext: &[u8],
    ) -> Result<bool> {
        self.0
            .verify_signature(sig_type, signature, signer, plaintext)
    }

    fn recover_secp_public_key(
        &self,
        hash: &[u8; SECP_SIG_MESSAGE_HASH_SIZE],
        signature: &[u8; SECP_SIG_LEN],
    ) -> Result<[u8; SECP_PUB_LEN]> {
        self.0.recover_secp_public_key(hash, signature)
    }

    fn hash(&self, code: u64, data: &[u8]) -> Result<Multihash<64>> {
        self.0.hash(code, data)
    }

    fn compute_unsealed_sector_cid(
        &self,
        proof_type: RegisteredSealProof,
        pieces: &[PieceInfo],
    ) -> Result<Cid> {
        self.0.compute_unsealed_sector_cid(proof_type, pieces)
    }

    fn verify_post(&self, verify_info: &WindowPoStVerifyInfo) -> Result<bool> {
        self.charge(self.0.price_list().on_verify_post(verify_info))?;
        Ok(true)
    }

    fn verify_consensus_fault(
        &self,
        h1: &[u8],
        h2: &[u8],
        extra: &[u8],
    ) -> Result<Option<ConsensusFault>> {
        let charge = self
            .0
            .price_list()
            .on_verify_consensus_fault(h1.len(), h2.len(), extra.len());
        self.charge(charge)?;
        Ok(None)
    }

    fn batch_verify_seals(&self, seals: &[SealVerifyInfo]) -> Result<Vec<bool>> {
        for seal in seals {
            self.charge(self.0.price_list().on_verify_seal(seal))?;
        }
        Ok(vec![true; seals.len()])
    }

    fn verify_aggregate_seals(&self, aggregate: &AggregateSealVerifyProofAndInfos) -> Result<bool> {
        self.charge(self.0.price_list().on_verify_aggregate_seals(aggregate))?;
        Ok(true)
    }

    fn verify_replica_update(&self, replica: &ReplicaUpdateInfo) -> Result<bool> {
        self.charge(self.0.price_list().on_verify_replica_update(replica))?;
        Ok(true)
    }
}

impl<K: ActorOps> ActorOps for TrustedProofsKernel<K> {
    fn resolve_address(&self, address: &Address) -> Result<ActorID> {
        self.0.resolve_address(address)
    }

    fn lookup_delegated_address(&self, actor_id: ActorID) -> Result<Option<Address>> {
        self.0.lookup_delegated_address(actor_id)
    }

    fn get_actor_code_cid(&self, id: ActorID) -> Result<Cid> {
        self.0.get_actor_code_cid(id)
    }

    fn next_actor_address(&self) -> Result<Address> {
        self.0.next_actor_address()
    }

    fn create_actor(
        &mut self,
        code_cid: Cid,
        actor_id: ActorID,
        delegated_address: Option<Address>,
    ) -> Result<()> {
        self.0.create_actor(code_cid, actor_id, delegated_address)
    }

    fn get_builtin_actor_type(&self, code_cid: &Cid) -> Result<u32> {
        self.0.get_builtin_actor_type(code_cid)
    }

    fn get_code_cid_for_type(&self, typ: u32) -> Result<Cid> {
        self.0.get_code_cid_for_type(typ)
    }

    fn balance_of(&self, actor_id: ActorID) -> Result<TokenAmount> {
        self.0.balance_of(actor_id)
    }
}

impl<K: IpldBlockOps> IpldBlockOps for TrustedProofsKernel<K> {
    fn block_open(&mut self, cid: &Cid) -> Result<(BlockId, BlockStat)> {
        self.0.block_open(cid)
    }

    fn block_create(&mut self, codec: u64, data: &[u8]) -> Result<BlockId> {
        self.0.block_create(codec, data)
    }

    fn block_link(&mut self, id: BlockId, hash_fun: u64, hash_len: u32) -> Result<Cid> {
        self.0.block_link(id, hash_fun, hash_len)
    }

    fn block_read(&self, id: BlockId, offset: u32, buf: &mut [u8]) -> Result<i32> {
        self.0.block_read(id, offset, buf)
    }

    fn block_stat(&self, id: BlockId) -> Result<BlockStat> {
        self.0.block_stat(id)
    }
}

impl<K: SelfOps> SelfOps for TrustedProofsKernel<K> {
    fn root(&self) -> Result<Cid> {
        self.0.root()
    }

    fn set_root(&mut self, root: Cid) -> Result<()> {
        self.0.set_root(root)
    }

    fn current_balance(&self) -> Result<TokenAmount> {
        self.0.current_balance()
    }

    fn self_destruct(&mut self, beneficiary: &Address) -> Result<()> {
        self.0.self_destruct(beneficiary)
    }
}

impl<K: CircSupplyOps> CircSupplyOps for TrustedProofsKernel<K> {
    fn total_fil_circ_supply(&self) -> Result<TokenAmount> {
        self.0.total_fil_circ_supply()
    }
}

impl<K: GasOps> GasOps for TrustedProofsKernel<K> {
    fn gas_used(&self) -> Gas {
        self.0.gas_used()
    }

    fn gas_available(&self) -> Gas {
        self.0.gas_available()
    }

    fn charge_gas(&self, name: &str, compute: Gas) -> Result<GasTimer> {
        self.0.charge_gas(name, compute)
    }

    fn price_list(&self) -> &PriceList {
        self.0.price_list()
    }
}

impl<K: MessageOps> MessageOps for TrustedProofsKernel<K> {
    fn msg_context(&self) -> Result<MessageContext> {
        self.0.msg_context()
    }
}

impl<K: NetworkOps> NetworkOps for TrustedProofsKernel<K> {
    fn network_context(&self) -> Result<NetworkContext> {
        self.0.network_context()
    }

    fn tipset_cid(&self, epoch: ChainEpoch) -> Result<Cid> {
        self.0.tipset_cid(epoch)
    }
}

impl<K: RandomnessOps> RandomnessOps for TrustedProofsKernel<K> {
    fn get_randomness_from_tickets(
        &self,
        personalization: i64,
        rand_epoch: ChainEpoch,
        entropy: &[u8],
    ) -> Result<[u8; RANDOMNESS_LENGTH]> {
        self.0
            .get_randomness_from_tickets(personalization, rand_epoch, entropy)
    }

    fn get_randomness_from_beacon(
        &self,
        personalization: i64,
        rand_epoch: ChainEpoch,
        entropy: &[u8],
    ) -> Result<[u8; RANDOMNESS_LENGTH]> {
        self.0
            .get_randomness_from_beacon(personalization, rand_epoch, entropy)
    }
}

impl<K: DebugOps> DebugOps for TrustedProofsKernel<K> {
    fn log(&self, message: String) {
        self.0.log(message)
    }

    fn debug_enabled(&self) -> bool {
        self.0.debug_enabled()
    }

    fn store_artifact(&self, name: &str, data: &[u8]) -> Result<()> {
        self.0.store_artifact(name, data)
    }
}

impl<K: LimiterOps> LimiterOps for TrustedProofsKernel<K> {
    type Limiter = K::Limiter;

    fn limiter_mut(&mut self) -> &mut Self::Limiter {
        self.0.limiter_mut()
    }
}

impl<K: EventOps> EventOps for TrustedProofsKernel<K> {
    fn emit_event(&mut self, raw_event: &[u8]) -> Result<()> {
        self.0.emit_event(raw_event)
    }
}
