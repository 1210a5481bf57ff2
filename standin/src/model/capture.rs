//! The state of a world's stream captures: each capture sequence, the streams taking
//! part in one, and the events recorded in one (`capture.rs` has the rules).

use std::collections::{BTreeMap, BTreeSet};

use cudrv::sys::{CUgraphEdgeData, CUstreamCaptureMode};

/// One capture sequence.
pub(crate) struct Sequence {
    pub(crate) graph: u64,
    /// Whether the capture made its graph (destroyed when the capture fails) or was given
    /// it (`cuStreamBeginCaptureToGraph`).
    pub(crate) owns_graph: bool,
    pub(crate) mode: CUstreamCaptureMode,
    /// The thread that began it.
    pub(crate) thread: u64,
    /// The context of its origin stream.
    pub(crate) ctx: u64,
    pub(crate) origin: u64,
    pub(crate) invalidated: bool,
    /// The dependencies of each captured node.
    pub(crate) parents: BTreeMap<u64, Vec<u64>>,
}

/// A stream taking part in a capture sequence.
pub(crate) struct Member {
    pub(crate) id: u64,
    /// The nodes the stream's next captured work depends on.
    pub(crate) deps: Vec<u64>,
    /// One default edge per dependency (`cuStreamGetCaptureInfo_v3`).
    pub(crate) edges: Vec<CUgraphEdgeData>,
}

impl Member {
    pub(crate) fn new(id: u64, deps: Vec<u64>) -> Member {
        let edges = vec![CUgraphEdgeData::default(); deps.len()];
        Member { id, deps, edges }
    }

    pub(crate) fn set_deps(&mut self, deps: Vec<u64>) {
        self.edges = vec![CUgraphEdgeData::default(); deps.len()];
        self.deps = deps;
    }
}

/// A world's capture sequences.
pub(crate) struct Captures {
    pub(crate) sequences: BTreeMap<u64, Sequence>,
    /// Capturing streams, by handle.
    pub(crate) members: BTreeMap<u64, Member>,
    /// Events recorded on a capturing stream: the sequence and the dependencies then.
    pub(crate) events: BTreeMap<u64, (u64, Vec<u64>)>,
    /// Events last recorded in a capture that has ended (until recorded again outside
    /// one): the H200 answers CUDA_ERROR_INVALID_VALUE to a query of one.
    pub(crate) ended_events: BTreeSet<u64>,
    /// Events recorded with `CU_EVENT_RECORD_EXTERNAL` in a capture going on (an event
    /// record node), by the capture's sequence: the H200 answers a query of one
    /// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture.
    pub(crate) external_events: BTreeMap<u64, u64>,
}

impl Captures {
    /// No capture.
    pub(crate) const fn new() -> Captures {
        Captures {
            sequences: BTreeMap::new(),
            members: BTreeMap::new(),
            events: BTreeMap::new(),
            ended_events: BTreeSet::new(),
            external_events: BTreeMap::new(),
        }
    }

    /// Removes sequence `id`, its streams and its events; its graph if the capture made
    /// it (for the caller to destroy).
    pub(crate) fn remove_sequence(&mut self, id: u64) -> Option<u64> {
        self.members.retain(|_, m| m.id != id);
        let ended: Vec<u64> = self.events.iter().filter(|(_, (e, _))| *e == id).map(|(&h, _)| h).collect();
        self.events.retain(|_, (e, _)| *e != id);
        self.ended_events.extend(ended);
        self.external_events.retain(|_, q| *q != id);
        self.sequences.remove(&id).filter(|s| s.owns_graph).map(|s| s.graph)
    }

    /// Stream `s` is being destroyed: it leaves its capture; a capture begun on it ends.
    /// The graph that capture made, for the caller to destroy.
    pub(crate) fn forget_stream(&mut self, s: u64) -> Option<u64> {
        match self.members.remove(&s) {
            Some(m) if self.sequences.get(&m.id).is_some_and(|q| q.origin == s) => self.remove_sequence(m.id),
            _ => None,
        }
    }
}
