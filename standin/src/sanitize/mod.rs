//! The sanitizer (docs/sanitizer.md): stream-order race detection.
//!
//! A logical model, apart from how the stand-in happens to run the work: each agent (the
//! host, each stream's queue) has a vector clock ([`clock::Clock`]). An operation issued
//! on a stream learns what the host knows (work issued after a synchronisation comes
//! after what it waited for) and, by CUDA's legacy-stream rules, what the legacy stream or
//! the blocking streams of its context know; then it counts one operation of its stream.
//! An event record keeps its stream's clock; a wait teaches it to the waiting stream;
//! synchronising a stream, an event or a context teaches the host. When an operation is
//! done, its footprint (`run/footprint.rs`: the bytes it read and wrote; a kernel's are
//! the addresses it touched) is checked against the shadow ([`shadow::Shadow`]): an
//! earlier access its clock does not know, one of the two a write, is a race, reported
//! with both operations and the allocation.
//!
//! All of a world's sanitizer state is this one field of its `World`; reports and the
//! summary at exit are process-wide, as the exit is.

mod clock;
mod config;
pub(crate) mod kernel;
mod report;
mod shadow;
mod shared_shadow;
mod unwritten;

use std::backtrace::{Backtrace, BacktraceStatus};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

pub use config::{Checks, VAR};
pub use report::Report;

use crate::model::stream::Target;
use crate::run::footprint::Footprint;
use crate::run::lock::lock;
use crate::run::queue::Queue;
use clock::Clock;
use shadow::{Access, Shadow};
use unwritten::Unwritten;

/// What an operation is, for reports: a number, its stream, and what it does.
#[derive(Debug)]
pub(crate) struct Desc {
    pub(crate) id: u64,
    pub(crate) stream: String,
    pub(crate) what: String,
    /// Where the host issued it: captured when `RUST_BACKTRACE` or `RUST_LIB_BACKTRACE`
    /// asks for backtraces (else disabled, at no cost).
    pub(crate) issued: Backtrace,
}

impl Desc {
    /// The backtrace of the issuing thread as lines appended to a report, if captured.
    fn issued_text(&self) -> String {
        match self.issued.status() {
            BacktraceStatus::Captured => format!("\n  {} issued at:\n{}", self.what, self.issued),
            _ => String::new(),
        }
    }
}

/// An operation issued on a stream, as the sanitizer sees it: its agent, its number there,
/// what it knows, and its description.
pub(crate) struct Op {
    agent: usize,
    tick: u64,
    clock: Clock,
    what: Arc<Desc>,
}

/// One agent: the host (index 0) or a stream's queue.
struct Agent {
    /// How reports name it.
    label: String,
    /// Its context's handle (0 for the host).
    ctx: u64,
    legacy: bool,
    blocking: bool,
    clock: Clock,
    /// Keeps the queue's address from being reused by another queue.
    _queue: Option<Arc<Queue>>,
}

struct State {
    agents: Vec<Agent>,
    /// Agents by queue address.
    by_queue: HashMap<usize, usize>,
    /// Each event's clock at its last record.
    events: HashMap<u64, Clock>,
    shadow: Shadow,
    /// Device memory allocated and not written since (the `init` check).
    unwritten: Unwritten,
    next_id: u64,
    /// Pairs of operations reported already.
    reported: HashSet<(u64, u64)>,
    /// Races inside kernels reported already (kernel, kind and the two PTX lines).
    reported_in_kernels: HashSet<String>,
    /// Every report, for `StandIn::sanitizer_reports`.
    reports: Vec<Report>,
    /// The last launch's global-access log, emptied, for the next launch to fill (a log
    /// allocated anew each launch, freed into the heap, grows the process).
    spare_log: kernel::LogBuffer,
}

impl State {
    fn new() -> State {
        let host = Agent {
            label: "the host".into(),
            ctx: 0,
            legacy: false,
            blocking: false,
            clock: Clock::default(),
            _queue: None,
        };
        State {
            agents: vec![host],
            by_queue: HashMap::new(),
            events: HashMap::new(),
            shadow: Shadow::default(),
            unwritten: Unwritten::default(),
            next_id: 1,
            reported: HashSet::new(),
            reported_in_kernels: HashSet::new(),
            reports: Vec::new(),
            spare_log: kernel::LogBuffer::default(),
        }
    }

    /// The agent of `t`'s queue, made at its first use (`stream`: the handle the program
    /// passed).
    fn agent(&mut self, t: &Target, stream: u64) -> usize {
        let key = Arc::as_ptr(&t.queue) as usize;
        if let Some(&a) = self.by_queue.get(&key) {
            return a;
        }
        let label = if t.legacy {
            format!("the legacy default stream of context {:#x}", t.ctx.handle)
        } else {
            format!("stream {stream:#x}")
        };
        let a = self.agents.len();
        self.agents.push(Agent {
            label,
            ctx: t.ctx.handle,
            legacy: t.legacy,
            blocking: t.blocking,
            clock: Clock::default(),
            _queue: Some(Arc::clone(&t.queue)),
        });
        self.by_queue.insert(key, a);
        a
    }

    fn clock(&self, a: usize) -> Clock {
        self.agents.get(a).map(|x| x.clock.clone()).unwrap_or_default()
    }

    /// What the legacy-stream rules add to work on agent `a`: on the legacy stream, the
    /// blocking streams of its context; on a blocking stream, its context's legacy stream.
    fn implicit(&self, a: usize) -> Clock {
        let mut c = Clock::default();
        let Some(me) = self.agents.get(a) else { return c };
        for (i, other) in self.agents.iter().enumerate() {
            let joins = i != a
                && other.ctx == me.ctx
                && ((me.legacy && other.blocking) || (me.blocking && other.legacy) || (me.legacy && other.legacy));
            if joins {
                c.join(&other.clock);
            }
        }
        c
    }

    /// Agent `a` learns `c`.
    /// What all the streams of context `ctx` know, joined.
    fn context_clock(&self, ctx: u64) -> Clock {
        let mut c = Clock::default();
        for a in self.agents.iter().filter(|a| a.ctx == ctx) {
            c.join(&a.clock);
        }
        c
    }

    fn teach(&mut self, a: usize, c: &Clock) {
        if let Some(x) = self.agents.get_mut(a) {
            x.clock.join(c);
        }
    }
}

/// Flags of [`Sanitizer::flags`].
const UNREAD: u8 = 0x80;
const RACES: u8 = 1;
const INIT: u8 = 2;
const SHARED: u8 = 4;
/// The checks were set by the program (`StandIn::sanitize`), which reads the world's reports
/// itself: they are written out but do not change the process's exit status.
const BY_CALLER: u8 = 8;

/// The flags of `c`.
fn flags_of(c: Checks) -> u8 {
    (if c.races { RACES } else { 0 }) | (if c.init { INIT } else { 0 }) | (if c.shared { SHARED } else { 0 })
}

/// A world's sanitizer.
pub(crate) struct Sanitizer {
    /// [`RACES`] and [`INIT`], or [`UNREAD`] before the checks are first asked for.
    flags: AtomicU8,
    state: Mutex<Option<State>>,
}

impl Sanitizer {
    pub(crate) const fn new() -> Sanitizer {
        Sanitizer { flags: AtomicU8::new(UNREAD), state: Mutex::new(None) }
    }

    /// Sets the checks (`StandIn::sanitize`), forgetting what was seen. A schedule is
    /// process-wide: it applies to every world.
    pub(crate) fn set(&self, c: Checks) {
        if let Some(seed) = c.schedule {
            crate::run::schedule::set(seed);
        }
        *lock(&self.state) = None;
        self.flags.store(flags_of(c) | BY_CALLER, Ordering::Release);
    }

    /// Writes `r` out (counted for the exit status unless the checks are the caller's) and
    /// keeps it with the world's reports.
    fn report(&self, r: Report) {
        report::emit(&r, self.flags.load(Ordering::Acquire) & BY_CALLER == 0);
        self.with(|s| s.reports.push(r));
    }

    /// Back to a new process's state: the checks of the environment, nothing seen.
    pub(crate) fn reset(&self) {
        *lock(&self.state) = None;
        self.flags.store(UNREAD, Ordering::Release);
    }

    /// The checks' flags (one atomic load once the checks are read).
    #[inline]
    fn flags(&self) -> u8 {
        let f = self.flags.load(Ordering::Acquire);
        if f & UNREAD == 0 {
            return f;
        }
        let c = config::from_env();
        let _ = self.flags.compare_exchange(UNREAD, flags_of(c), Ordering::AcqRel, Ordering::Acquire);
        self.flags.load(Ordering::Acquire)
    }

    /// Reads the checks if they were not read yet (at `cuInit`).
    pub(crate) fn read_checks(&self) {
        let _ = self.flags();
    }

    /// Whether races are checked.
    #[inline]
    pub(crate) fn races(&self) -> bool {
        self.flags() & RACES != 0
    }

    /// Whether reads of never-written device memory are checked.
    #[inline]
    pub(crate) fn init(&self) -> bool {
        self.flags() & INIT != 0
    }

    /// Whether shared-memory races inside blocks are checked.
    #[inline]
    pub(crate) fn shared(&self) -> bool {
        self.flags() & SHARED != 0
    }

    /// A report from inside a kernel (`kernel.rs`), made once per `key` in the world.
    pub(crate) fn kernel_report(&self, key: String, r: Report) {
        if self.with(|s| s.reported_in_kernels.insert(key)) {
            self.report(r);
        }
    }

    /// The observer of a launch of `kernel` (`checks`: shared, races between blocks, init),
    /// with the world's spare log.
    pub(crate) fn kernel_observer(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        checks: [bool; 3],
    ) -> kernel::KernelObserver {
        let log = self.with(|s| std::mem::take(&mut s.spare_log));
        kernel::KernelObserver::new(kernel, grid, block, checks, log)
    }

    /// Keeps the log of a finished launch's observer for the next launch.
    pub(crate) fn keep_log(&self, log: kernel::LogBuffer) {
        self.with(|s| s.spare_log = log);
    }

    /// Runs `f` on the bytes never written (the `init` check's state).
    pub(crate) fn with_unwritten<R>(&self, f: impl FnOnce(&mut Unwritten) -> R) -> R {
        self.with(|s| f(&mut s.unwritten))
    }

    /// Whether operations are followed at all (races or init).
    #[inline]
    fn on(&self) -> bool {
        self.flags() & (RACES | INIT) != 0
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut s = lock(&self.state);
        f(s.get_or_insert_with(State::new))
    }

    /// An operation issued on `t` (`stream`: the handle the program passed), described by
    /// `what`; None when neither races nor reads of unwritten memory are checked.
    pub(crate) fn issue(&self, t: &Target, stream: u64, what: impl FnOnce() -> String) -> Option<Op> {
        if !self.on() {
            return None;
        }
        let issued = Backtrace::capture();
        Some(self.with(|s| {
            let a = s.agent(t, stream);
            let mut c = s.clock(a);
            c.join(&s.clock(0));
            c.join(&s.implicit(a));
            let tick = c.tick(a);
            if let Some(x) = s.agents.get_mut(a) {
                x.clock = c.clone();
            }
            let id = s.next_id;
            s.next_id += 1;
            let stream = s.agents.get(a).map(|x| x.label.clone()).unwrap_or_default();
            Op { agent: a, tick, clock: c, what: Arc::new(Desc { id, stream, what: what(), issued }) }
        }))
    }

    /// `op` is done with footprint `fp`: checks it against the shadow and reports each
    /// earlier operation it races with (once per pair), naming the allocation `alloc`
    /// describes for an address.
    pub(crate) fn complete(&self, op: &Op, fp: Footprint, alloc: impl Fn(u64) -> Option<String>) {
        let (reads, writes) = (fp.reads.sorted(), fp.writes.sorted());
        if reads.is_empty() && writes.is_empty() {
            return;
        }
        if self.init() {
            let uninit = self.with(|s| {
                for &(a, b) in &writes {
                    s.unwritten.remove(a, b);
                }
                let hits: Vec<(u64, u64)> = reads.iter().flat_map(|&(a, b)| s.unwritten.hits(a, b)).collect();
                // Each byte is reported once.
                for &(a, b) in &hits {
                    s.unwritten.remove(a, b);
                }
                hits
            });
            if let Some(&(start, _)) = uninit.first() {
                let r = uninit_report(&op.what, &uninit, alloc(start));
                self.report(r);
            }
        }
        if !self.races() {
            return;
        }
        let me = Access { agent: op.agent, tick: op.tick, what: Arc::clone(&op.what) };
        let conflicts = self.with(|s| {
            let found = s.shadow.apply(&me, &op.clock, &reads, &writes);
            // One report per earlier operation: its first range met (contiguous conflicts
            // merged), the bytes and ranges in all.
            let mut by_op: BTreeMap<u64, Met> = BTreeMap::new();
            for c in found {
                let n = c.end - c.start;
                match by_op.get_mut(&c.earlier.what.id) {
                    Some(m) => {
                        if c.start == m.end && m.ranges == 1 {
                            m.end = c.end;
                        } else if !(c.start >= m.first.start && c.end <= m.end) {
                            m.ranges += 1;
                        }
                        m.bytes += n;
                        m.first.earlier_writes |= c.earlier_writes;
                        m.first.later_writes |= c.later_writes;
                    }
                    None => {
                        let end = c.end;
                        by_op.insert(c.earlier.what.id, Met { first: c, end, bytes: n, ranges: 1 });
                    }
                }
            }
            by_op.into_values().filter(|m| s.reported.insert((m.first.earlier.what.id, op.what.id))).collect::<Vec<_>>()
        });
        for m in conflicts {
            let r = race_report(&m, &op.what, alloc(m.first.start));
            self.report(r);
        }
    }

    /// Two nodes `a` and `b` (handles `nodes`) of graph launch `launch` meet as `m` with no
    /// edge path between them: reported once per pair of nodes, however often launched.
    pub(crate) fn graph_race(
        &self,
        launch: &Op,
        nodes: (u64, u64),
        a: &str,
        b: &str,
        m: &Meeting,
        alloc: Option<String>,
    ) {
        // Node handles are below 2^63: the top bit keeps the key apart from operations'.
        if !self.with(|s| s.reported.insert((nodes.0 | 1 << 63, nodes.1))) {
            return;
        }
        let verb = |w: bool| if w { "writes" } else { "reads" };
        let alloc_text = alloc.clone().unwrap_or_else(|| "no live allocation".into());
        let text = format!(
            "cudrv-standin sanitizer: race: in {} on {}, {a} {} and {b} {} {} bytes in [{:#x}, {:#x}) of {alloc_text}, and no path of edges orders the two nodes",
            launch.what.what,
            launch.what.stream,
            verb(m.a_writes),
            verb(m.b_writes),
            m.bytes,
            m.start,
            m.end,
        ) + &launch.what.issued_text();
        let j = report::json_string;
        let json = format!(
            "{{\"kind\":\"race\",\"graph\":{},\"first\":{{\"op\":{},\"stream\":{},\"access\":{}}},\"second\":{{\"op\":{},\"stream\":{},\"access\":{}}},\"start\":{},\"end\":{},\"bytes\":{},\"ranges\":1,\"allocation\":{}}}",
            j(&launch.what.what),
            j(a),
            j(&launch.what.stream),
            j(if m.a_writes { "write" } else { "read" }),
            j(b),
            j(&launch.what.stream),
            j(if m.b_writes { "write" } else { "read" }),
            j(&format!("{:#x}", m.start)),
            j(&format!("{:#x}", m.end)),
            m.bytes,
            alloc.as_deref().map_or_else(|| "null".into(), j),
        );
        let r = Report { kind: "race", text, json };
        self.report(r);
    }

    /// The host learns what `op` knows (a call that returns after its work is done).
    pub(crate) fn host_waited(&self, op: &Op) {
        self.with(|s| s.teach(0, &op.clock));
    }

    /// `cuEventRecord` of `e` on `t`: the record is an operation of `t`; the event keeps
    /// what it knows.
    pub(crate) fn record_event(&self, t: &Target, stream: u64, e: u64) {
        if let Some(op) = self.issue(t, stream, || format!("event record {e:#x}")) {
            self.with(|s| s.events.insert(e, op.clock));
        }
    }

    /// An event recorded after all the work of context `ctx` (`cuGreenCtxRecordEvent`):
    /// it keeps what all its streams know.
    pub(crate) fn record_event_of_context(&self, ctx: u64, e: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            let c = s.context_clock(ctx);
            s.events.insert(e, c);
        });
    }

    /// `cuStreamWaitEvent`: `t` learns what `e`'s last record knew (nothing if never
    /// recorded).
    pub(crate) fn wait_event(&self, t: &Target, stream: u64, e: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            let a = s.agent(t, stream);
            if let Some(c) = s.events.get(&e).cloned() {
                s.teach(a, &c);
            }
        });
    }

    /// A wait for a value in memory on `t`: it may be for any work issued so far, so `t`
    /// learns what every agent knows (a wait for work issued later is not followed).
    pub(crate) fn wait_for_anything(&self, t: &Target, stream: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            let a = s.agent(t, stream);
            let mut c = Clock::default();
            for x in &s.agents {
                c.join(&x.clock);
            }
            s.teach(a, &c);
        });
    }

    /// The host waited for `e` (`cuEventSynchronize`, a `cuEventQuery` that found it done).
    pub(crate) fn host_waited_event(&self, e: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            if let Some(c) = s.events.get(&e).cloned() {
                s.teach(0, &c);
            }
        });
    }

    /// The host waited for `t`'s work (`cuStreamSynchronize`, a `cuStreamQuery` that found
    /// it done); on the legacy stream, for the blocking streams' work too.
    pub(crate) fn host_waited_stream(&self, t: &Target, stream: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            let a = s.agent(t, stream);
            let mut c = s.clock(a);
            if t.legacy {
                c.join(&s.implicit(a));
            }
            s.teach(0, &c);
        });
    }

    /// The host waited for all the work of context `ctx` (`cuCtxSynchronize`).
    pub(crate) fn host_waited_context(&self, ctx: u64) {
        if !self.races() {
            return;
        }
        self.with(|s| {
            let c = s.context_clock(ctx);
            s.teach(0, &c);
        });
    }

    /// `[start, start + len)` was allocated or freed: what was known of it is forgotten.
    pub(crate) fn forget(&self, start: u64, len: usize) {
        if !self.on() {
            return;
        }
        let end = start.saturating_add(len as u64);
        self.with(|s| {
            s.shadow.forget(start, end);
            s.unwritten.remove(start, end);
        });
    }

    /// `[start, start + len)` was just allocated: with `init`, none of it is written yet.
    pub(crate) fn allocated(&self, start: u64, len: usize) {
        let end = start.saturating_add(len as u64);
        if self.races() {
            self.with(|s| s.shadow.forget(start, end));
        }
        if self.init() {
            self.with(|s| s.unwritten.add(start, end));
        }
    }

    /// Work whose writes are not known ran (a host kernel, a stream memory operation):
    /// every allocation counts as written from now on, so that `init` reports nothing it
    /// cannot be sure of.
    pub(crate) fn unknown_writes(&self) {
        if self.init() {
            self.with(|s| s.unwritten.clear());
        }
    }

    /// The reports made so far.
    pub(crate) fn reports(&self) -> Vec<Report> {
        self.with(|s| s.reports.clone())
    }
}

/// The report of `op`'s reads of never-written device memory (`hits`, sorted; `alloc`:
/// the allocation of the first).
fn uninit_report(op: &Desc, hits: &[(u64, u64)], alloc: Option<String>) -> Report {
    let bytes: u64 = hits.iter().map(|&(a, b)| b - a).sum();
    let (start, end) = hits.first().copied().unwrap_or_default();
    let alloc_text = alloc.clone().unwrap_or_else(|| "no live allocation".into());
    let text = format!(
        "cudrv-standin sanitizer: uninitialised read: {} on {} reads {bytes} bytes never written (by a copy, memset or kernel) since they were allocated, the first in [{start:#x}, {end:#x}) of {alloc_text}",
        op.what, op.stream,
    ) + &op.issued_text();
    let j = report::json_string;
    let json = format!(
        "{{\"kind\":\"uninit\",\"op\":{},\"stream\":{},\"start\":{},\"end\":{},\"bytes\":{bytes},\"ranges\":{},\"allocation\":{}}}",
        j(&op.what),
        j(&op.stream),
        j(&format!("{start:#x}")),
        j(&format!("{end:#x}")),
        hits.len(),
        alloc.as_deref().map_or_else(|| "null".into(), j),
    );
    Report { kind: "uninit", text, json }
}

/// What one operation met of an earlier one: the first range (`first.start..end`), the
/// bytes and the number of ranges in all.
struct Met {
    first: shadow::Conflict,
    end: u64,
    bytes: u64,
    ranges: u64,
}

/// Where two footprints meet: the first range, whether each side writes there, and the
/// bytes in all.
pub(crate) struct Meeting {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) a_writes: bool,
    pub(crate) b_writes: bool,
    pub(crate) bytes: u64,
}

/// The overlap of two sorted, disjoint range lists: the first range and the bytes.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<(u64, u64, u64)> {
    let (mut i, mut j, mut first, mut bytes) = (0, 0, None, 0);
    while let (Some(&(s1, e1)), Some(&(s2, e2))) = (a.get(i), b.get(j)) {
        let (s, e) = (s1.max(s2), e1.min(e2));
        if s < e {
            first.get_or_insert((s, e));
            bytes += e - s;
        }
        if e1 < e2 {
            i += 1;
        } else {
            j += 1;
        }
    }
    first.map(|(s, e)| (s, e, bytes))
}

/// Where `a` and `b` conflict (one writes what the other reads or writes), if they do.
pub(crate) fn meet(a: &Footprint, b: &Footprint) -> Option<Meeting> {
    let (ar, aw) = (a.reads.clone().sorted(), a.writes.clone().sorted());
    let (br, bw) = (b.reads.clone().sorted(), b.writes.clone().sorted());
    let cases = [(&aw, &bw, true, true), (&aw, &br, true, false), (&ar, &bw, false, true)];
    let mut best: Option<Meeting> = None;
    for (x, y, a_writes, b_writes) in cases {
        if let Some((start, end, bytes)) = overlap(x, y) {
            match &mut best {
                Some(m) => {
                    m.bytes = m.bytes.max(bytes);
                    m.a_writes |= a_writes;
                    m.b_writes |= b_writes;
                }
                None => best = Some(Meeting { start, end, a_writes, b_writes, bytes }),
            }
        }
    }
    best
}

/// The report of a race between `m.first.earlier` and `later` (`alloc`: the allocation of
/// the first range).
fn race_report(m: &Met, later: &Desc, alloc: Option<String>) -> Report {
    let (c, end, bytes) = (&m.first, m.end, m.bytes);
    let verb = |w: bool| if w { "writes" } else { "reads" };
    let ranges = match m.ranges {
        1 => String::new(),
        n => format!(" (in {n} ranges; the first:)"),
    };
    let (first, second) = (&c.earlier.what, later);
    let alloc_text = alloc.clone().unwrap_or_else(|| "no live allocation".into());
    let text = format!(
        "cudrv-standin sanitizer: race: {} on {} {} and {} on {} {} {} bytes{} in [{:#x}, {:#x}) of {}, and nothing orders the two (no stream order, event wait or synchronisation between them)",
        first.what,
        first.stream,
        verb(c.earlier_writes),
        second.what,
        second.stream,
        verb(c.later_writes),
        bytes,
        ranges,
        c.start,
        end,
        alloc_text,
    ) + &first.issued_text()
        + &second.issued_text();
    let j = report::json_string;
    let json = format!(
        "{{\"kind\":\"race\",\"first\":{{\"op\":{},\"stream\":{},\"access\":{}}},\"second\":{{\"op\":{},\"stream\":{},\"access\":{}}},\"start\":{},\"end\":{},\"bytes\":{},\"ranges\":{},\"allocation\":{}}}",
        j(&first.what),
        j(&first.stream),
        j(if c.earlier_writes { "write" } else { "read" }),
        j(&second.what),
        j(&second.stream),
        j(if c.later_writes { "write" } else { "read" }),
        j(&format!("{:#x}", c.start)),
        j(&format!("{end:#x}")),
        bytes,
        m.ranges,
        alloc.as_deref().map_or_else(|| "null".into(), j),
    );
    Report { kind: "race", text, json }
}
