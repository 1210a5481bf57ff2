//! Races inside one launch of a PTX kernel, seen through the executor's observer
//! (`cudrv_ptx::Observer`): shared-memory races between barriers inside a block (`shared`)
//! and plain global-memory accesses of different blocks that meet (`races`).
//!
//! Shared memory: each byte keeps its last plain writer and up to two plain readers
//! since (thread, PTX line, the block's barrier epoch and the warp's `bar.warp.sync`
//! epoch at the access). Two accesses by different threads, one a write, are ordered when
//! a barrier of the block opened between them, or, for two lanes of one warp, when the
//! warp executed `bar.warp.sync` between them; else they race. Atomics (and strong
//! loads and stores) are not checked.
//!
//! Global memory: each block's plain accesses are logged (the first [`LOG_LIMIT`] of a
//! launch), with the number of synchronising operations (atomics, strong accesses,
//! fences) its threads had done before. Two blocks' accesses to the same byte, one a
//! write, race unless one block did a synchronising operation after its access and the
//! other one before its own (then atomics or fences may order them: not reported).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cudrv_ptx::{Access, AccessKind, BlockObserver, Event, Observer, Space, WarpAccess};

use super::report::{json_string, Report};
use super::shared_shadow::{By, Byte, SharedShadow, SHARED_LIMIT};
use super::unwritten::Unwritten;
use crate::run::lock::lock;

/// The most global accesses of one launch logged for the check between blocks.
pub(crate) const LOG_LIMIT: usize = 1 << 19;

/// A shared-memory race found in a block.
struct SharedRace {
    ctaid: [u32; 3],
    offset: u64,
    first: By,
    first_writes: bool,
    second: By,
    second_writes: bool,
}

/// A logged plain global access of a block: one thread's, or consecutive threads' that
/// touched consecutive bytes (a warp's lanes reading a row), merged.
#[derive(Clone, Copy)]
struct Logged {
    addr: u64,
    /// Bytes from `addr`.
    len: u32,
    line: u32,
    /// The block and the synchronising operations it had done before: an index into the
    /// launch's [`Log::origins`] (24 bytes an entry, where the two would take 32).
    origin: u32,
    /// The thread that accessed `addr` (a block has at most 1024).
    thread: u16,
    /// Bytes per thread when consecutive threads' accesses were merged (thread
    /// `thread + k` accessed the `k`th run of this many bytes); 0: `thread`'s alone.
    per_thread: u8,
    write: bool,
}

// The log's bound in docs/sanitizer.md counts 24 bytes an entry.
const _: () = assert!(std::mem::size_of::<Logged>() == 24);

/// A launch's log of global accesses, emptied (its allocation kept), for the next launch.
#[derive(Default)]
pub(crate) struct LogBuffer(Vec<Logged>);

/// A launch's logged global accesses.
#[derive(Default)]
struct Log {
    entries: Vec<Logged>,
    /// Each entry's block (linear index) and synchronising operations before it.
    origins: Vec<(u32, u32)>,
    /// Each block's index and synchronising operations in all, by linear index.
    syncs: Vec<BlockSyncs>,
}

/// The block (linear index) of `l`, from its launch's [`Log::origins`].
fn block_of(origins: &[(u32, u32)], l: &Logged) -> u32 {
    origins.get(l.origin as usize).map_or(0, |o| o.0)
}

impl Log {
    fn block(&self, l: &Logged) -> u32 {
        block_of(&self.origins, l)
    }

    fn seq(&self, l: &Logged) -> u32 {
        self.origins.get(l.origin as usize).map_or(0, |o| o.1)
    }

    fn ctaid(&self, l: &Logged) -> [u32; 3] {
        self.syncs.get(self.block(l) as usize).map_or([0; 3], |s| s.0)
    }
}

impl Logged {
    fn end(&self) -> u64 {
        self.addr.saturating_add(u64::from(self.len))
    }

    /// The thread that accessed byte `x` of the range.
    fn thread_at(&self, x: u64) -> u32 {
        let first = u32::from(self.thread);
        match self.per_thread {
            0 => first,
            n => first.saturating_add((x.saturating_sub(self.addr) / u64::from(n)) as u32),
        }
    }

    /// Extends the range by `size` bytes at its end accessed by `thread` (the same
    /// instruction, at the same synchronisation count), if the range can say who did.
    fn extend(&mut self, thread: u32, size: u32) -> bool {
        let (Ok(per), Some(len)) = (u8::try_from(size), self.len.checked_add(size)) else { return false };
        let first = u32::from(self.thread);
        let last = self.thread_at(self.end().saturating_sub(1));
        let same = self.per_thread == 0 && thread == first;
        let next = thread == last.wrapping_add(1)
            && (self.per_thread == per || (self.per_thread == 0 && first == last && self.len == size));
        if same || next {
            if next {
                self.per_thread = per;
            }
            self.len = len;
        }
        same || next
    }
}

/// A block's index and the synchronising operations it did in all.
type BlockSyncs = ([u32; 3], u32);

/// The observer of one launch.
pub(crate) struct KernelObserver {
    kernel: String,
    grid: [u32; 3],
    block: [u32; 3],
    shared: bool,
    /// Races between blocks are checked.
    global: bool,
    /// Global accesses are logged (races between blocks, or reads of unwritten memory).
    logging: bool,
    races: Mutex<Vec<SharedRace>>,
    log: Mutex<Log>,
    /// The launch's log is full: blocks log no more.
    full: AtomicBool,
    /// Shared shadows and logs of finished blocks, emptied, for the next blocks to reuse
    /// (their allocations kept).
    spare: Mutex<Vec<(SharedShadow, Vec<Logged>)>>,
}

struct BlockObs<'a> {
    l: &'a KernelObserver,
    ctaid: [u32; 3],
    index: u32,
    epoch: u32,
    wepochs: Vec<u32>,
    /// Each shared byte's last writer and readers (as far as the block touched).
    shadow: SharedShadow,
    races: Vec<SharedRace>,
    log: Vec<Logged>,
    /// The synchronising-operation counts of the block's entries (their `origin`s, from 0).
    seqs: Vec<u32>,
    seq: u32,
}

impl KernelObserver {
    /// The observer of a launch of `kernel`; its global log fills `log` (a previous
    /// launch's, [`KernelObserver::into_log`]).
    pub(crate) fn new(
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        checks: [bool; 3],
        log: LogBuffer,
    ) -> KernelObserver {
        let [shared, global, init] = checks;
        KernelObserver {
            kernel: kernel.to_string(),
            grid,
            block,
            shared,
            global,
            logging: global || init,
            races: Mutex::new(Vec::new()),
            log: Mutex::new(Log { entries: log.0, ..Log::default() }),
            full: AtomicBool::new(false),
            spare: Mutex::new(Vec::new()),
        }
    }

    fn tid(&self, t: u32) -> [u32; 3] {
        let [bx, by, _] = self.block.map(|d| d.max(1));
        [t % bx, (t / bx) % by, t / (bx * by)]
    }

    fn launch_text(&self) -> String {
        format!("kernel `{}` (grid {}, block {})", self.kernel, dims(self.grid), dims(self.block))
    }

    /// The reports found, each with the key it is reported once under.
    pub(crate) fn reports(&self) -> Vec<(String, Report)> {
        let mut out = Vec::new();
        let mut races = std::mem::take(&mut *lock(&self.races));
        // Blocks finish in any order: the block a race is reported in is the first one.
        races.sort_by_key(|r| [r.ctaid[2], r.ctaid[1], r.ctaid[0]]);
        for r in &races {
            let key = format!(
                "shared {} {} {}",
                self.kernel,
                r.first.line().min(r.second.line()),
                r.first.line().max(r.second.line())
            );
            out.push((key, self.shared_report(r)));
        }
        if !self.global {
            return out;
        }
        let mut log = lock(&self.log);
        for (a, b) in global_races(&mut log) {
            let key = format!("global {} {} {}", self.kernel, a.line.min(b.line), a.line.max(b.line));
            out.push((key, self.global_report(&a, log.ctaid(&a), &b, log.ctaid(&b))));
        }
        out
    }

    /// The log's allocation, emptied, for the next launch.
    pub(crate) fn into_log(self) -> LogBuffer {
        let mut entries = self.log.into_inner().map(|l| l.entries).unwrap_or_default();
        entries.clear();
        LogBuffer(entries)
    }

    /// The `init` check with the reading thread: the logged reads of bytes never written
    /// (by earlier work, or by this kernel: `writes`, its stores), reported once, the
    /// first read named; those bytes then count as written.
    pub(crate) fn unwritten_reads(&self, writes: &[(u64, u64)], unwritten: &mut Unwritten) -> Option<(String, Report)> {
        let g = lock(&self.log);
        let mut first: Option<(u64, Logged)> = None;
        let mut hits = Vec::new();
        for l in g.entries.iter().filter(|l| !l.write) {
            for (a, b) in unwritten.hits(l.addr, l.end()) {
                for (a, b) in minus(a, b, writes) {
                    if first.is_none_or(|(at, _)| a < at) {
                        first = Some((a, *l));
                    }
                    hits.push((a, b));
                }
            }
        }
        let (at, l) = first?;
        hits.sort_unstable();
        hits.dedup();
        let mut bytes = 0;
        let mut end = 0;
        for &(a, b) in &hits {
            bytes += b.saturating_sub(a.max(end));
            end = end.max(b);
            unwritten.remove(a, b);
        }
        let ctaid = g.ctaid(&l);
        let (who, j) = self.side(&By::new(l.thread_at(at), l.line, 0, 0), false, ctaid);
        let text = format!(
            "cudrv-standin sanitizer: uninitialised read: {}: {who} reads device address {at:#x}, never written (by a copy, memset or kernel) since it was allocated ({bytes} such bytes read in all)",
            self.launch_text()
        );
        let json = format!(
            "{{\"kind\":\"uninit\",\"kernel\":{},\"read\":{j},\"address\":{},\"bytes\":{bytes}}}",
            json_string(&self.kernel),
            json_string(&format!("{at:#x}"))
        );
        Some((format!("uninit {} {at:#x}", self.kernel), Report { kind: "uninit", text, json }))
    }

    fn side(&self, by: &By, writes: bool, ctaid: [u32; 3]) -> (String, String) {
        let access = if writes { "write" } else { "read" };
        let t = self.tid(by.thread);
        (
            format!("thread {} of block {} ({access} at PTX line {})", dims(t), dims(ctaid), by.line()),
            format!(
                "{{\"thread\":[{},{},{}],\"block\":[{},{},{}],\"line\":{},\"access\":\"{access}\"}}",
                t[0],
                t[1],
                t[2],
                ctaid[0],
                ctaid[1],
                ctaid[2],
                by.line()
            ),
        )
    }

    fn shared_report(&self, r: &SharedRace) -> Report {
        let (t1, j1) = self.side(&r.first, r.first_writes, r.ctaid);
        let (t2, j2) = self.side(&r.second, r.second_writes, r.ctaid);
        let text = format!(
            "cudrv-standin sanitizer: shared-memory race: {}: {t1} and {t2} touch shared offset {:#x} with no barrier between them",
            self.launch_text(),
            r.offset
        );
        let json = format!(
            "{{\"kind\":\"shared\",\"kernel\":{},\"first\":{j1},\"second\":{j2},\"offset\":{}}}",
            json_string(&self.kernel),
            json_string(&format!("{:#x}", r.offset))
        );
        Report { kind: "shared", text, json }
    }

    fn global_report(&self, a: &Logged, ca: [u32; 3], b: &Logged, cb: [u32; 3]) -> Report {
        let at = a.addr.max(b.addr);
        let by = |l: &Logged| By::new(l.thread_at(at), l.line, 0, 0);
        let (t1, j1) = self.side(&by(a), a.write, ca);
        let (t2, j2) = self.side(&by(b), b.write, cb);
        let text = format!(
            "cudrv-standin sanitizer: race between blocks: {}: {t1} and {t2} touch device address {at:#x} with plain accesses and no atomic or fence that could order them",
            self.launch_text()
        );
        let json = format!(
            "{{\"kind\":\"block_race\",\"kernel\":{},\"first\":{j1},\"second\":{j2},\"address\":{}}}",
            json_string(&self.kernel),
            json_string(&format!("{at:#x}"))
        );
        Report { kind: "block_race", text, json }
    }
}

/// The parts of `[a, b)` outside the sorted, disjoint `ranges`.
fn minus(a: u64, b: u64, ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = a;
    for &(s, e) in ranges.iter().skip(ranges.partition_point(|&(_, e)| e <= a)) {
        if s >= b {
            break;
        }
        if s > at {
            out.push((at, s));
        }
        at = at.max(e);
    }
    if at < b {
        out.push((at, b));
    }
    out
}

fn dims(d: [u32; 3]) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

impl Observer for KernelObserver {
    fn block(&self, ctaid: [u32; 3]) -> Box<dyn BlockObserver + '_> {
        let index = ctaid[0] + ctaid[1] * self.grid[0] + ctaid[2] * self.grid[0] * self.grid[1];
        let (shadow, log) = lock(&self.spare).pop().unwrap_or_default();
        Box::new(BlockObs {
            l: self,
            ctaid,
            index,
            epoch: 0,
            wepochs: Vec::new(),
            shadow,
            races: Vec::new(),
            log,
            seqs: Vec::new(),
            seq: 0,
        })
    }
}

impl BlockObs<'_> {
    fn wepoch(&self, thread: u32) -> u32 {
        self.wepochs.get((thread / 32) as usize).copied().unwrap_or(0)
    }

    /// A warp instruction's shared accesses.
    fn shared_warp(&mut self, w: &WarpAccess) {
        let mut shadow = std::mem::take(&mut self.shadow);
        let write = w.kind == AccessKind::Write;
        let wepoch = self.wepoch(w.first_thread);
        let epoch = self.epoch;
        let by = |lane: u32| By::new(w.first_thread + lane, w.line, epoch, wepoch);
        let mut lanes = (0..32u32)
            .filter(|l| w.mask >> l & 1 != 0)
            .map(|l| (l, w.addrs.get(l as usize).copied().unwrap_or(0)))
            .peekable();
        while let Some((lane, addr)) = lanes.next() {
            self.shared_at(&mut shadow, addr, w.size, by(lane), write);
            // Lanes after it at the same offset (the same bytes, by threads of one warp in
            // one barrier and warp-sync epoch): the last stands for them all. The bytes end
            // as it leaves them, and an earlier access that races with one of them races
            // with the first or the last (only the thread differs).
            let mut last = None;
            while let Some((l, _)) = lanes.next_if(|&(_, a)| a == addr) {
                last = Some(l);
            }
            if let Some(l) = last {
                self.shared_at(&mut shadow, addr, w.size, by(l), write);
            }
        }
        self.shadow = shadow;
    }

    /// An access by `me` of `size` shared bytes at `addr`, checked in `shadow`.
    #[inline(always)]
    fn shared_at(&mut self, shadow: &mut SharedShadow, addr: u64, size: u32, me: By, write: bool) {
        let end = addr.saturating_add(u64::from(size));
        if end <= SHARED_LIMIT {
            shadow.access(addr, end, |b, off| self.step(b, off, me, write));
        }
    }

    /// Checks an access by `me` (writing if `write`, at the block's current epochs) of the
    /// shared byte at `off`, whose state is `b`, against it (a race found is kept once per
    /// pair of lines), and leaves in `b` the byte's state after it.
    #[inline(always)]
    fn step(&mut self, b: &mut Byte, off: u64, me: By, write: bool) {
        // Whether `prev` is ordered before `me`: the same thread, an earlier barrier epoch,
        // or the same warp and an earlier warp-sync epoch.
        let ordered = |prev: &By| {
            prev.thread == me.thread
                || prev.epoch != me.epoch
                || (prev.thread / 32 == me.thread / 32 && prev.wepoch != me.wepoch)
        };
        if let Some(w) = b.writer.filter(|w| !ordered(w)) {
            self.race(off, w, true, me, write);
        } else if write {
            if let Some(r) = b.readers.iter().flatten().find(|r| !ordered(r)) {
                self.race(off, *r, false, me, write);
            }
        }
        if write {
            *b = Byte { writer: Some(me), readers: [None, None] };
            return;
        }
        // Readers of an older epoch are ordered before anything now: forget them.
        let [r0, r1] = &mut b.readers;
        for r in [&mut *r0, &mut *r1] {
            if r.is_some_and(|r| r.epoch != me.epoch) {
                *r = None;
            }
        }
        match r0 {
            None => *r0 = Some(me),
            Some(first) if first.thread != me.thread => *r1 = Some(me),
            _ => {}
        }
    }

    /// Keeps a shared-memory race between `first` and `second` at `off` (one per pair of
    /// lines in a block).
    #[cold]
    fn race(&mut self, off: u64, first: By, first_writes: bool, second: By, second_writes: bool) {
        if !self
            .races
            .iter()
            .any(|r| r.first.line_plus_one == first.line_plus_one && r.second.line_plus_one == second.line_plus_one)
        {
            self.races.push(SharedRace { ctaid: self.ctaid, offset: off, first, first_writes, second, second_writes });
        }
    }
}

impl BlockObs<'_> {
    fn global(&mut self, addr: u64, size: u32, thread: u32, line: u32, write: bool) {
        if self.log.len() >= LOG_LIMIT || self.l.full.load(Ordering::Relaxed) {
            return;
        }
        if self.seqs.last() != Some(&self.seq) {
            self.seqs.push(self.seq);
        }
        let origin = self.seqs.len().saturating_sub(1) as u32;
        if let Some(last) = self.log.last_mut() {
            if last.write == write
                && last.line == line
                && last.origin == origin
                && last.end() == addr
                && last.extend(thread, size)
            {
                return;
            }
        }
        self.log.push(Logged {
            addr,
            len: size,
            line,
            origin,
            thread: u16::try_from(thread).unwrap_or(u16::MAX),
            per_thread: 0,
            write,
        });
    }
}

impl BlockObserver for BlockObs<'_> {
    /// One thread's access: as the one lane of its warp that accessed.
    fn access(&mut self, a: &Access) {
        let lane = a.thread % 32;
        let mut addrs = [0u64; 32];
        if let Some(x) = addrs.get_mut(lane as usize) {
            *x = a.addr;
        }
        self.warp_access(&WarpAccess {
            space: a.space,
            kind: a.kind,
            addrs: &addrs,
            mask: 1 << lane,
            size: a.size,
            first_thread: a.thread - lane,
            line: a.line,
        });
    }

    fn warp_access(&mut self, w: &WarpAccess) {
        match (w.space, w.kind) {
            (_, AccessKind::Atomic) => self.seq = self.seq.saturating_add(w.mask.count_ones()),
            (Space::Shared, _) if self.l.shared => self.shared_warp(w),
            (Space::Global, kind) if self.l.logging => {
                let write = kind == AccessKind::Write;
                w.each().for_each(|a| self.global(a.addr, a.size, a.thread, a.line, write));
            }
            _ => {}
        }
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Barrier => self.epoch = self.epoch.wrapping_add(1),
            Event::WarpSync { warp } => {
                let w = warp as usize;
                if self.wepochs.len() <= w {
                    self.wepochs.resize(w + 1, 0);
                }
                if let Some(x) = self.wepochs.get_mut(w) {
                    *x = x.wrapping_add(1);
                }
            }
            Event::Fence { .. } => self.seq = self.seq.saturating_add(1),
        }
    }

    fn finish(&mut self) {
        if !self.races.is_empty() {
            lock(&self.l.races).append(&mut self.races);
        }
        if self.l.logging {
            let mut g = lock(&self.l.log);
            let room = LOG_LIMIT.saturating_sub(g.entries.len());
            if room <= self.log.len() {
                self.l.full.store(true, Ordering::Relaxed);
            }
            self.log.truncate(room);
            if g.entries.capacity() == 0 {
                // At once, so that it is never copied growing (pages untouched stay free).
                g.entries.reserve_exact(LOG_LIMIT);
            }
            let base = g.origins.len() as u32;
            for l in &mut self.log {
                l.origin = l.origin.saturating_add(base);
            }
            g.entries.append(&mut self.log);
            let index = self.index;
            g.origins.extend(self.seqs.drain(..).map(|s| (index, s)));
            let i = self.index as usize;
            if g.syncs.len() <= i {
                g.syncs.resize(i + 1, ([0; 3], 0));
            }
            if let Some(s) = g.syncs.get_mut(i) {
                *s = (self.ctaid, self.seq);
            }
        }
        let mut shadow = std::mem::take(&mut self.shadow);
        shadow.clear();
        let mut log = std::mem::take(&mut self.log);
        log.clear();
        lock(&self.l.spare).push((shadow, log));
    }
}

/// Pairs of logged accesses of different blocks that meet, one writing, which no
/// synchronising operation can order (at most one pair per pair of lines).
fn global_races(log: &mut Log) -> Vec<(Logged, Logged)> {
    // By address, then block and thread: blocks finish in any order on the host's
    // threads, and the pair reported must not depend on which finished first.
    let origins = &log.origins;
    log.entries.sort_unstable_by_key(|l| (l.addr, block_of(origins, l), l.thread, l.line, l.write));
    let log = &*log;
    let total = |b: u32| log.syncs.get(b as usize).map_or(0, |s| s.1);
    // a may come before b: a's block synchronises after a, b's before b.
    let may_order = |a: &Logged, b: &Logged| log.seq(a) < total(log.block(a)) && log.seq(b) > 0;
    let mut out: Vec<(Logged, Logged)> = Vec::new();
    let mut active: Vec<Logged> = Vec::new();
    for l in log.entries.iter() {
        active.retain(|x| x.end() > l.addr);
        for x in &active {
            if log.block(x) != log.block(l) && (x.write || l.write) && !may_order(x, l) && !may_order(l, x) {
                let seen = out.iter().any(|(a, b)| a.line == x.line && b.line == l.line);
                if !seen && out.len() < 16 {
                    out.push((*x, *l));
                }
            }
        }
        // Reads among reads need no keeping when nothing writes: keep the list short.
        if active.len() < 64 || l.write {
            active.push(*l);
        }
    }
    out
}
