//! A form run on the executor, its outputs written as the GPU side writes them
//! (`scripts/probes/instructions/run.c`): each lane's slots in hex joined by ':', lanes
//! joined by ' ', a run of equal lanes once as `VALUE*COUNT`.

use cudrv_ptx::{Executor, GlobalMemory, HostMemory, Module};

use super::gen::{module, slot_bytes, Form};

/// The line payload of `form` on the executor: its outputs, or `REFUSED <why>` when the
/// executor does not load it, or `LAUNCH <fault>` when the launch fails; run through both
/// executors, `EXECUTORS DIFFER: ...` when they do not give the same.
pub fn payload(form: &Form) -> String {
    let (text, lanes) = module(form);
    let mut m = match Module::load(&text) {
        Ok(m) => m,
        Err(e) => return format!("REFUSED {e}"),
    };
    let mut mem = HostMemory::new();
    let addrs: Vec<u64> = m.globals().iter().map(|g| mem.alloc(g.size.max(1) as usize)).collect();
    for i in 0..addrs.len() {
        let img = m.global_image(i, &addrs).unwrap_or_default();
        if mem.write(addrs[i], &img).is_err() {
            return "REFUSED globals".to_string();
        }
    }
    if let Err(e) = m.bind_globals(&addrs) {
        return format!("REFUSED {e}");
    }
    let slots = form.dsts.len();
    // Both executors, each into an output of its own: they must agree to the bit.
    let mut payloads = Vec::new();
    for executor in [Executor::Interpreter, Executor::Compiled] {
        m.set_executor(executor);
        let out = mem.alloc(lanes * slots * 8);
        let blocks = lanes.div_ceil(128) as u32;
        if let Err(f) = m.launch("k", [blocks, 1, 1], [128, 1, 1], 0, &[&out.to_le_bytes()], &mem) {
            payloads.push(format!("LAUNCH {f:?}"));
            continue;
        }
        let bytes = mem.bytes(out, lanes * slots * 8).unwrap_or_default();
        let widths: Vec<usize> = form.dsts.iter().map(|k| slot_bytes(*k)).collect();
        let lane_text = |i: usize| -> String {
            (0..slots)
                .map(|j| {
                    let at = (i * slots + j) * 8;
                    let mut v = [0u8; 8];
                    v[..widths[j]].copy_from_slice(&bytes[at..at + widths[j]]);
                    format!("{:x}", u64::from_le_bytes(v))
                })
                .collect::<Vec<_>>()
                .join(":")
        };
        payloads.push(encode((0..lanes).map(lane_text).collect()));
    }
    match &payloads[..] {
        [interpreted, compiled] if interpreted != compiled => {
            format!("EXECUTORS DIFFER: interpreter {interpreted} / compiled {compiled}")
        }
        [_, compiled] => compiled.clone(),
        _ => String::new(),
    }
}

/// Lanes joined by ' ', runs of equal lanes as `VALUE*COUNT`.
pub fn encode(lanes: Vec<String>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut run = 1;
        while i + run < lanes.len() && lanes[i + run] == lanes[i] {
            run += 1;
        }
        out.push(if run > 1 { format!("{}*{run}", lanes[i]) } else { lanes[i].clone() });
        i += run;
    }
    out.join(" ")
}

/// The lanes of a payload (runs expanded); `None` for a status (`LOAD`, `LAUNCH`, `REFUSED`).
pub fn decode(payload: &str) -> Option<Vec<String>> {
    if payload.starts_with("LOAD") || payload.starts_with("LAUNCH") || payload.starts_with("REFUSED") {
        return None;
    }
    let mut lanes = Vec::new();
    for tok in payload.split(' ').filter(|t| !t.is_empty()) {
        match tok.split_once('*') {
            Some((v, n)) => lanes.extend(std::iter::repeat_n(v.to_string(), n.parse().unwrap_or(1))),
            None => lanes.push(tok.to_string()),
        }
    }
    Some(lanes)
}
