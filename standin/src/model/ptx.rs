//! The stand-in's PTX policy, over what `cudrv-ptx` reads of a text (one front end: the
//! stand-in parses no PTX of its own): the version and target gating of the emulated
//! driver's JIT ([`max_isa`], [`gate`], on the text's [`cudrv_ptx::Header`]) and the texture
//! and surface queries the H200 refuses ([`unsupported_suq`], [`kernels_with_unavailable_txq`]).
//! The names of PTX instructions (the JIT error log's wording) are `cudrv_ptx`'s
//! ([`cudrv_ptx::instructions::is_ptx_instruction`]).

/// The newest PTX ISA version (major, minor) the JIT of driver `version` (driver form,
/// `12040`) accepts: the PTX ISA document's release notes (11.x: 7.x; 12.0-12.4: 8.0-8.4;
/// 12.5 and 12.6: 8.5; 12.7: 8.6; 12.8: 8.7; 12.9: 8.8; 13.x: 9.x).
pub(crate) fn max_isa(version: u32) -> (u32, u32) {
    let (major, minor) = (version / 1000, (version % 1000) / 10);
    match (major, minor) {
        (0..=10, _) => (6, 5),
        (11, m) => (7, m),
        (12, 0..=4) => (8, minor),
        (12, 5 | 6) => (8, 5),
        (12, m) => (8, (m - 1).min(8)),
        (13, m) => (9, m),
        _ => (9, minor),
    }
}

/// The device's compute capability as a `.target` number (`sm_90`).
pub(crate) const DEVICE_SM: u32 = 90;

/// Why the JIT of a driver that accepts PTX ISA up to `max` refuses the PTX text whose
/// opening directives are `header`: its `.version` is newer
/// (CUDA_ERROR_UNSUPPORTED_PTX_VERSION), or a `.target` names a compute capability above
/// the device's (CUDA_ERROR_INVALID_PTX); the status and the error log ptxas writes.
/// `None` when neither (a `.version` that is no number is left to the loader, which
/// refuses it).
pub(crate) fn gate(header: &cudrv_ptx::Header, max: (u32, u32)) -> Option<(cudrv::sys::CUresult, String)> {
    const ABORTED: &str = "ptxas fatal   : Ptx assembly aborted due to errors";
    if let Some((major, minor)) = header.version.filter(|&v| v > max) {
        let log = format!(
            "ptxas application ptx input, line {}; fatal   : Unsupported .version {major}.{minor}; \
             current version is '{}.{}'\n{ABORTED}",
            header.version_line, max.0, max.1
        );
        return Some((cudrv::sys::CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, log));
    }
    let above = header
        .targets
        .iter()
        .filter_map(|t| t.strip_prefix("sm_"))
        .filter_map(|t| t.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<u32>().ok())
        .any(|sm| sm > DEVICE_SM);
    if above {
        // The H200's first line (conformance jit.ptx_target_sm_100): no line number.
        let log = "ptxas fatal   : SM version specified by .target is higher than default SM version assumed";
        return Some((cudrv::sys::CUresult::CUDA_ERROR_INVALID_PTX, log.to_string()));
    }
    None
}

/// The `txq`/`suq` queries the H200 answers on an object: width, height, depth.
fn dimension_query(q: &str) -> bool {
    matches!(q, "width" | "height" | "depth")
}

/// The query of each `op.` instruction (`txq`, `suq`) in `text`.
fn queries<'a>(text: &'a str, op: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    text.match_indices(op).filter_map(move |(at, _)| {
        let before = text.get(..at).and_then(|b| b.chars().next_back());
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$' || c == '%') {
            return None;
        }
        let rest = text.get(at + op.len()..)?;
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        rest.get(..end)
    })
}

/// Whether PTX `text` has a `suq` other than width/height/depth: the H200 refuses such a
/// module (CUDA_ERROR_NOT_SUPPORTED, an empty log).
pub(crate) fn unsupported_suq(text: &str) -> bool {
    queries(text, "suq.").any(|q| !dimension_query(q))
}

/// The kernels of PTX `text` whose body has a `txq` other than width/height/depth/level:
/// the H200 loads the module but cuModuleGetFunction answers CUDA_ERROR_NOT_FOUND for
/// them.
pub(crate) fn kernels_with_unavailable_txq(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts = text.split(".entry").skip(1);
    for part in parts {
        let body = part.split(".func").next().unwrap_or(part);
        let name: String =
            body.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
        if queries(body, "txq.").any(|q| !dimension_query(q) && q != "level") {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn gates_the_ptx_version_and_the_target() {
        use cudrv::sys::CUresult as R;
        let table = [
            (11030, (7, 3)),
            (11080, (7, 8)),
            (12000, (8, 0)),
            (12040, (8, 4)),
            (12050, (8, 5)),
            (12060, (8, 5)),
            (12070, (8, 6)),
            (12080, (8, 7)),
            (12090, (8, 8)),
            (13000, (9, 0)),
            (13050, (9, 5)),
        ];
        for (v, isa) in table {
            assert_eq!(max_isa(v), isa, "{v}");
        }
        let ptx = |version: &str, target: &str| {
            cudrv_ptx::Header::read(&format!("// c\n.version {version}\n.target {target}\n.address_size 64\n")).unwrap()
        };
        assert_eq!(gate(&ptx("9.0", "sm_90"), (9, 0)), None);
        assert_eq!(gate(&ptx("7.0", "sm_50"), (7, 3)), None);
        assert_eq!(gate(&ptx("9.0", "sm_90a"), (9, 0)), None);
        let (code, log) = gate(&ptx("9.9", "sm_90"), (9, 0)).unwrap();
        assert_eq!(code, R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        assert!(
            log.starts_with(
                "ptxas application ptx input, line 2; fatal   : Unsupported .version 9.9; current version is '9.0'"
            ),
            "{log}"
        );
        assert_eq!(gate(&ptx("7.4", "sm_50"), (7, 3)).unwrap().0, R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        for target in ["sm_100", "sm_100a", "sm_90, sm_120"] {
            let (code, log) = gate(&ptx("8.8", target), (9, 0)).unwrap();
            assert_eq!(code, R::CUDA_ERROR_INVALID_PTX, "{target}");
            // The H200's words (conformance jit.ptx_target_sm_100): no line number.
            assert_eq!(
                log, "ptxas fatal   : SM version specified by .target is higher than default SM version assumed",
                "{target}"
            );
        }
    }

    #[test]
    fn texture_and_surface_queries_the_h200_refuses() {
        let k = |name: &str, body: &str| format!(".visible .entry {name}(.param .u64 t)\n{{\n{body}\nret;\n}}\n");
        let text = [
            ".version 8.0\n.target sm_90\n".to_string(),
            k("dims", "txq.width.b32 %r1, [t];\ntxq.level.width.b32 %r2, [t], %r3;"),
            k("samples", "txq.num_samples.b32 %r1, [t];"),
            k("order", "txq.channel_order.b32 %r1, [t];"),
        ]
        .concat();
        assert_eq!(kernels_with_unavailable_txq(&text), ["samples", "order"]);
        assert!(!unsupported_suq(&text));
        assert!(!unsupported_suq("suq.width.b32 %r1, [s]; suq.depth.b32 %r2, [s]; nosuq.channel_order"));
        assert!(unsupported_suq("suq.channel_order.b32 %r1, [s];"));
    }
}
