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

use std::sync::Mutex;

use cudrv_ptx::{Access, AccessKind, BlockObserver, Event, Observer, Space};

use super::report::{json_string, Report};
use super::unwritten::Unwritten;
use crate::run::lock::lock;

/// The most global accesses of one launch logged for the check between blocks.
pub(crate) const LOG_LIMIT: usize = 1 << 20;

/// Shared-memory offsets past this are not checked (no block has that much: the H200's
/// limit is 227 KiB), so that the shadow, one entry per byte, stays bounded.
const SHARED_LIMIT: u64 = 1 << 20;

/// One access, as a race report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct By {
    thread: u32,
    /// The PTX line plus one ([`By::line`]): never zero, so that an `Option<By>` (three
    /// per shared byte in the shadow) takes no more room than a `By`.
    line_plus_one: std::num::NonZeroU32,
    /// The block's barrier epoch at the access.
    epoch: u32,
    /// The warp's `bar.warp.sync` epoch at the access.
    wepoch: u32,
}

impl By {
    fn new(thread: u32, line: u32, epoch: u32, wepoch: u32) -> By {
        let line_plus_one = std::num::NonZeroU32::new(line.saturating_add(1)).unwrap_or(std::num::NonZeroU32::MAX);
        By { thread, line_plus_one, epoch, wepoch }
    }

    fn line(&self) -> u32 {
        self.line_plus_one.get() - 1
    }
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Byte {
    writer: Option<By>,
    readers: [Option<By>; 2],
}

/// A shared-memory race found in a block.
struct SharedRace {
    ctaid: [u32; 3],
    offset: u64,
    first: By,
    first_writes: bool,
    second: By,
    second_writes: bool,
}

/// A logged plain global access of a block.
#[derive(Clone, Copy)]
struct Logged {
    addr: u64,
    end: u64,
    write: bool,
    thread: u32,
    line: u32,
    /// Synchronising operations the block had done before.
    seq: u32,
    block: u32,
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
    log: Mutex<(Vec<Logged>, Vec<BlockSyncs>)>,
    /// Shared shadows of finished blocks, emptied, for the next blocks to reuse (their
    /// allocations kept).
    spare: Mutex<Vec<Vec<Byte>>>,
}

struct BlockObs<'a> {
    l: &'a KernelObserver,
    ctaid: [u32; 3],
    index: u32,
    epoch: u32,
    wepochs: Vec<u32>,
    /// Each shared byte's last writer and readers, by offset (as far as the block touched).
    bytes: Vec<Byte>,
    races: Vec<SharedRace>,
    log: Vec<Logged>,
    seq: u32,
}

impl KernelObserver {
    pub(crate) fn new(kernel: &str, grid: [u32; 3], block: [u32; 3], checks: [bool; 3]) -> KernelObserver {
        let [shared, global, init] = checks;
        KernelObserver {
            kernel: kernel.to_string(),
            grid,
            block,
            shared,
            global,
            logging: global || init,
            races: Mutex::new(Vec::new()),
            log: Mutex::new((Vec::new(), Vec::new())),
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
        let races = std::mem::take(&mut *lock(&self.races));
        for r in &races {
            let key = format!(
                "shared {} {} {}",
                self.kernel,
                r.first.line().min(r.second.line()),
                r.first.line().max(r.second.line())
            );
            out.push((key, self.shared_report(r)));
        }
        let (mut log, syncs) = std::mem::take(&mut *lock(&self.log));
        if !self.global {
            return out;
        }
        for (a, b) in global_races(&mut log, &syncs) {
            let key = format!("global {} {} {}", self.kernel, a.line.min(b.line), a.line.max(b.line));
            let ca = syncs.get(a.block as usize).map_or([0; 3], |s| s.0);
            let cb = syncs.get(b.block as usize).map_or([0; 3], |s| s.0);
            out.push((key, self.global_report(&a, ca, &b, cb)));
        }
        out
    }

    /// The `init` check with the reading thread: the logged reads of bytes never written
    /// (by earlier work, or by this kernel: `writes`, its stores), reported once, the
    /// first read named; those bytes then count as written.
    pub(crate) fn unwritten_reads(&self, writes: &[(u64, u64)], unwritten: &mut Unwritten) -> Option<(String, Report)> {
        let g = lock(&self.log);
        let mut first: Option<(u64, Logged)> = None;
        let mut hits = Vec::new();
        for l in g.0.iter().filter(|l| !l.write) {
            for (a, b) in unwritten.hits(l.addr, l.end) {
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
        let ctaid = g.1.get(l.block as usize).map_or([0; 3], |s| s.0);
        let (who, j) = self.side(&By::new(l.thread, l.line, 0, 0), false, ctaid);
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
        let by = |l: &Logged| By::new(l.thread, l.line, 0, 0);
        let (t1, j1) = self.side(&by(a), a.write, ca);
        let (t2, j2) = self.side(&by(b), b.write, cb);
        let at = a.addr.max(b.addr);
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
        Box::new(BlockObs {
            l: self,
            ctaid,
            index,
            epoch: 0,
            wepochs: Vec::new(),
            bytes: lock(&self.spare).pop().unwrap_or_default(),
            races: Vec::new(),
            log: Vec::new(),
            seq: 0,
        })
    }
}

impl BlockObs<'_> {
    fn wepoch(&self, thread: u32) -> u32 {
        self.wepochs.get((thread / 32) as usize).copied().unwrap_or(0)
    }

    /// Whether `prev` is ordered before an access by `thread` now.
    fn ordered(&self, prev: &By, thread: u32) -> bool {
        prev.thread == thread
            || prev.epoch != self.epoch
            || (prev.thread / 32 == thread / 32 && prev.wepoch != self.wepoch(thread))
    }

    fn shared(&mut self, a: &Access) {
        let write = a.kind == AccessKind::Write;
        let me = By::new(a.thread, a.line, self.epoch, self.wepoch(a.thread));
        let end = a.addr.saturating_add(u64::from(a.size));
        if end > SHARED_LIMIT {
            return;
        }
        if end as usize > self.bytes.len() {
            self.bytes.resize(end as usize, Byte::default());
        }
        let (start, stop) = (a.addr as usize, end as usize);
        let Some(&first) = self.bytes.get(start) else { return };
        // The bytes of one access usually share their state: then they are one check.
        if self.bytes.get(start..stop).is_some_and(|run| run.iter().all(|b| *b == first)) {
            let nb = self.step(first, a.addr, me, write);
            if let Some(run) = self.bytes.get_mut(start..stop) {
                run.fill(nb);
            }
            return;
        }
        for off in start..stop {
            let b = self.bytes.get(off).copied().unwrap_or_default();
            let nb = self.step(b, off as u64, me, write);
            if let Some(slot) = self.bytes.get_mut(off) {
                *slot = nb;
            }
        }
    }

    /// Checks an access by `me` (writing if `write`) of the shared byte at `off`, whose
    /// state is `b`, against it (a race found is kept once per pair of lines), and returns
    /// the byte's state after it.
    fn step(&mut self, b: Byte, off: u64, me: By, write: bool) -> Byte {
        let mut race = None;
        if let Some(w) = b.writer.filter(|w| !self.ordered(w, me.thread)) {
            race = Some((w, true));
        }
        if write && race.is_none() {
            race = b.readers.iter().flatten().find(|r| !self.ordered(r, me.thread)).map(|r| (*r, false));
        }
        if let Some((first, first_writes)) = race {
            // One race per pair of lines in a block.
            if !self
                .races
                .iter()
                .any(|r| r.first.line_plus_one == first.line_plus_one && r.second.line_plus_one == me.line_plus_one)
            {
                self.races.push(SharedRace {
                    ctaid: self.ctaid,
                    offset: off,
                    first,
                    first_writes,
                    second: me,
                    second_writes: write,
                });
            }
        }
        if write {
            return Byte { writer: Some(me), readers: [None, None] };
        }
        // Readers of an older epoch are ordered before anything now: forget them.
        let fresh = |r: &Option<By>| r.filter(|r| r.epoch == self.epoch);
        let mut rs = [fresh(&b.readers[0]), fresh(&b.readers[1])];
        match rs {
            [None, _] => rs[0] = Some(me),
            [Some(r0), None] if r0.thread != me.thread => rs[1] = Some(me),
            [Some(r0), Some(_)] if r0.thread != me.thread => rs[1] = Some(me),
            _ => {}
        }
        Byte { writer: b.writer, readers: rs }
    }
}

impl BlockObserver for BlockObs<'_> {
    fn access(&mut self, a: &Access) {
        match (a.space, a.kind) {
            (_, AccessKind::Atomic) => self.seq = self.seq.saturating_add(1),
            (Space::Shared, _) if self.l.shared => self.shared(a),
            (Space::Global, kind) if self.l.logging && self.log.len() < LOG_LIMIT => {
                let (addr, write) = (a.addr, kind == AccessKind::Write);
                let end = addr.saturating_add(u64::from(a.size));
                if let Some(last) = self.log.last_mut() {
                    if last.write == write
                        && last.line == a.line
                        && last.thread == a.thread
                        && last.seq == self.seq
                        && last.end == addr
                    {
                        last.end = end;
                        return;
                    }
                }
                self.log.push(Logged {
                    addr,
                    end,
                    write,
                    thread: a.thread,
                    line: a.line,
                    seq: self.seq,
                    block: self.index,
                });
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
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        lock(&self.l.spare).push(bytes);
        if !self.races.is_empty() {
            lock(&self.l.races).append(&mut self.races);
        }
        if self.l.logging {
            let mut g = lock(&self.l.log);
            let room = LOG_LIMIT.saturating_sub(g.0.len());
            self.log.truncate(room);
            g.0.append(&mut self.log);
            let i = self.index as usize;
            if g.1.len() <= i {
                g.1.resize(i + 1, ([0; 3], 0));
            }
            if let Some(s) = g.1.get_mut(i) {
                *s = (self.ctaid, self.seq);
            }
        }
    }
}

/// Pairs of logged accesses of different blocks that meet, one writing, which no
/// synchronising operation can order (at most one pair per pair of lines).
fn global_races(log: &mut [Logged], syncs: &[BlockSyncs]) -> Vec<(Logged, Logged)> {
    log.sort_unstable_by_key(|l| l.addr);
    let total = |b: u32| syncs.get(b as usize).map_or(0, |s| s.1);
    // a may come before b: a's block synchronises after a, b's before b.
    let may_order = |a: &Logged, b: &Logged| a.seq < total(a.block) && b.seq > 0;
    let mut out: Vec<(Logged, Logged)> = Vec::new();
    let mut active: Vec<Logged> = Vec::new();
    for l in log.iter() {
        active.retain(|x| x.end > l.addr);
        for x in &active {
            if x.block != l.block && (x.write || l.write) && !may_order(x, l) && !may_order(l, x) {
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
