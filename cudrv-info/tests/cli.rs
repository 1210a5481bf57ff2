//! Runs the built `cudrv-info` binary and checks its output and exit codes.

use std::path::Path;
use std::process::{Command, Output};

/// Every variable cudrv or the stand-in reads, removed so the host's setup cannot leak in.
const ENV: [&str; 5] = [
    "CUDRV_LIBCUDA",
    "CUDRV_MAX_DRIVER_VERSION",
    "CUDRV_PER_THREAD_DEFAULT_STREAM",
    "CUDRV_STANDIN_VERSION",
    "CUDRV_STANDIN_DEVICES",
];

/// A command for the binary with a clean CUDRV_* environment.
fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cudrv-info"));
    for v in ENV {
        c.env_remove(v);
    }
    c.args(args);
    c
}

fn run(args: &[&str]) -> Output {
    cmd(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Asserts the exit code, showing the output when it differs.
fn assert_code(o: &Output, code: i32) {
    assert_eq!(o.status.code(), Some(code), "stdout:\n{}\nstderr:\n{}", stdout(o), stderr(o));
}

/// Asserts a bad-input failure: exit 2, nothing on stdout, one `cudrv-info: ` line on
/// stderr containing `needle`.
fn assert_bad_input(o: &Output, needle: &str) {
    assert_code(o, 2);
    assert_eq!(stdout(o), "");
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cudrv-info: "), "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The number after `key` (e.g. `"resolved: "`) in `text`.
fn number_after(text: &str, key: &str) -> usize {
    let rest = &text[text.find(key).unwrap_or_else(|| panic!("no {key:?} in:\n{text}")) + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

/// Whether the machine has a loadable NVIDIA driver (then the fallback cannot be shown):
/// decided from what the tool printed, never from its exit code alone.
fn real_driver_present(o: &Output) -> bool {
    let out = String::from_utf8_lossy(&o.stdout);
    let real = o.status.code() == Some(0) && !out.contains("cudrv stand-in") && !out.contains("\"stand_in\": true");
    if real {
        eprintln!("a CUDA driver is installed here; the no-driver fallback is not tested");
    }
    real
}

#[test]
fn stand_in_shows_its_device_and_resolved_entries() {
    let o = run(&["--driver", "stand-in"]);
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert!(out.starts_with("driver: cudrv stand-in (emulated CUDA 13.5; requested with --driver stand-in)\n"));
    assert!(out.contains("\nversion: 13.5\n"), "{out}");
    assert!(out.contains("bootstrap: cuGetProcAddress_v2"), "{out}");
    assert!(out.contains("  0: cudrv stand-in device, compute capability 9.0, 80.0 GiB"), "{out}");
    let resolved = number_after(&out, "  resolved: ");
    let variants = number_after(&out, "entry table: ");
    assert!(resolved > 0 && resolved < variants, "{out}");
    assert_eq!(number_after(&out, "gated by the driver version: "), 0);
}

#[test]
fn capped_stand_in_as_json() {
    let o = run(&["--driver", "stand-in", "--max-version", "12.4", "--json"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    json::check(&out);
    for s in [
        "\"stand_in\": true",
        "\"origin\": \"stand_in_requested\"",
        "\"version\": \"12.4\"",
        "\"driver_version\": \"13.5\"",
        "\"max_version\": \"12.4\"",
        "\"capped\": true",
        "\"name\": \"cudrv stand-in device\"",
        "{\"needs\": \"12.5\", \"count\": ",
        "\"devices_error\": null",
    ] {
        assert!(out.contains(s), "no {s} in:\n{out}");
    }
    assert!(number_after(&out, "\"gated\": ") > 0, "{out}");
    assert!(number_after(&out, "\"names_unbound\": ") > 0, "{out}");
    assert!(!out.contains("\"entries\""), "entries only with --all");
}

#[test]
fn capped_text_lists_gated_versions() {
    let o = run(&["--driver", "stand-in", "--max-version", "13.0"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("version: 13.0 (capped at 13.0; the driver reports 13.5)"), "{out}");
    assert!(out.contains("(needs 13.1: "), "{out}");
    assert!(!out.contains("needs 13.0"), "{out}");
}

#[test]
fn all_as_json_lists_every_entry() {
    let o = run(&["--driver", "stand-in", "--all", "--json"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    json::check(&out);
    let variants = number_after(&out, "\"variants\": ");
    let names = number_after(&out, "\"names_bound\": ") + number_after(&out, "\"names_unbound\": ");
    assert_eq!(out.matches("\"kind\": \"variant\"").count(), variants);
    assert_eq!(out.matches("\"kind\": \"name\"").count(), names);
    assert!(out.contains("\"state\": \"not_requested\""));
}

#[test]
fn all_as_text_shows_states_and_bindings() {
    let o = run(&["--driver", "stand-in", "--all", "--max-version", "12.0"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("\nvariants:\n") && out.contains("\nnames:\n"), "{out}");
    assert!(out.contains("needs driver 12.8, bound to nothing"), "{out}");
    assert!(out.contains("bound to cuInit_v2000"), "{out}");
    assert!(out.contains("not requested (per-thread"), "{out}");
}

#[test]
fn per_thread_option_requests_per_thread_variants() {
    let o = run(&["--driver", "stand-in", "--per-thread-default-stream"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("per-thread default stream: on"), "{out}");
    assert_eq!(number_after(&out, "--per-thread-default-stream): "), 0);
}

#[test]
fn stand_in_version_and_devices_come_from_the_environment() {
    let o = cmd(&["--driver", "stand-in"])
        .env("CUDRV_STANDIN_VERSION", "12.4")
        .env("CUDRV_STANDIN_DEVICES", "0")
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(out.contains("emulated CUDA 12.4"), "{out}");
    assert!(out.contains("\ndevices: 0\n"), "{out}");
}

#[test]
fn a_too_old_driver_fails_to_load() {
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_VERSION", "11.0").output().unwrap();
    assert_code(&o, 1);
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("is older than 11.3"), "{err}");
}

#[test]
fn no_driver_falls_back_to_the_stand_in() {
    let o = run(&[]);
    if real_driver_present(&o) {
        return;
    }
    assert_code(&o, 3);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("cudrv-info: no CUDA driver found: looked for libcuda.so.1"));
    let out = stdout(&o);
    assert!(
        out.starts_with("driver: cudrv stand-in (emulated CUDA 13.5; no NVIDIA driver on this machine)\n"),
        "{out}"
    );
    assert!(out.contains("cudrv stand-in device"), "{out}");
}

#[test]
fn no_driver_falls_back_to_the_stand_in_as_json() {
    let o = run(&["--json"]);
    if real_driver_present(&o) {
        return;
    }
    assert_code(&o, 3);
    assert_eq!(stderr(&o).lines().count(), 1);
    let out = stdout(&o);
    json::check(&out);
    assert!(out.contains("\"stand_in\": true"), "{out}");
    assert!(out.contains("\"origin\": \"stand_in_no_driver_found\""), "{out}");
}

/// The stand-in built as a `libcuda.so.1`-like library, if cargo built the cdylib.
fn stand_in_library() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_BIN_EXE_cudrv-info")).parent()?;
    let found =
        [dir.join("deps"), dir.to_path_buf()].into_iter().map(|d| d.join("libcudrv_standin.so")).find(|p| p.exists());
    if found.is_none() {
        eprintln!("libcudrv_standin.so was not built; loading a driver library is not tested");
    }
    found
}

#[test]
fn a_driver_library_is_reported_as_a_real_driver() {
    let Some(lib) = stand_in_library() else {
        return;
    };
    let lib = lib.to_str().unwrap();
    let o = run(&["--driver", lib]);
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    let out = stdout(&o);
    assert!(out.starts_with(&format!("driver: {lib}\n")), "{out}");
    assert!(out.contains("cudrv stand-in device"), "{out}");

    let o = cmd(&["--json"]).env("CUDRV_LIBCUDA", lib).env("CUDRV_STANDIN_VERSION", "11.8").output().unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    json::check(&out);
    for s in ["\"stand_in\": false", "\"origin\": \"library\"", "\"version\": \"11.8\"", "\"get_proc_address\": \"v1\""]
    {
        assert!(out.contains(s), "no {s} in:\n{out}");
    }
}

#[test]
fn a_missing_driver_path_is_bad_input() {
    let o = run(&["--driver", "/nonexistent"]);
    assert_bad_input(&o, "/nonexistent");
}

#[test]
fn a_missing_driver_path_from_the_environment_is_bad_input() {
    let o = cmd(&[]).env("CUDRV_LIBCUDA", "/nonexistent/libcuda.so.1").output().unwrap();
    assert_bad_input(&o, "/nonexistent/libcuda.so.1");
}

#[test]
fn a_library_that_is_not_a_driver_is_bad_input() {
    let libm = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("libm.so.6 not found");
    let o = run(&["--driver", libm]);
    assert_bad_input(&o, "not a CUDA driver");
}

#[test]
fn an_unparsable_version_is_bad_input() {
    assert_bad_input(&run(&["--max-version", "banana"]), "\"banana\"");
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_MAX_DRIVER_VERSION", "banana").output().unwrap();
    assert_bad_input(&o, "CUDRV_MAX_DRIVER_VERSION");
}

#[test]
fn usage_errors_exit_2() {
    let o = run(&["--no-such-flag"]);
    assert_code(&o, 2);
    assert_eq!(stdout(&o), "");
    assert_bad_input(&run(&["--driver", ""]), "--driver");
}

#[test]
fn help_documents_the_exit_codes() {
    let o = run(&["--help"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    for s in ["Exit codes:", "\n  0  ", "\n  1  ", "\n  2  ", "\n  3  "] {
        assert!(out.contains(s), "no {s:?} in:\n{out}");
    }
}

/// A strict JSON checker, enough to tell that the output is one well-formed value.
mod json {
    /// Panics unless `text` is exactly one JSON value (surrounding whitespace allowed).
    pub fn check(text: &str) {
        let mut p = Parser { s: text.as_bytes(), i: 0 };
        p.ws();
        p.value();
        p.ws();
        assert_eq!(p.i, p.s.len(), "trailing text after the JSON value");
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn peek(&self) -> u8 {
            *self.s.get(self.i).unwrap_or(&0)
        }

        fn eat(&mut self, b: u8) {
            assert_eq!(self.peek(), b, "expected {:?} at byte {}", b as char, self.i);
            self.i += 1;
        }

        fn ws(&mut self) {
            while matches!(self.peek(), b' ' | b'\n' | b'\r' | b'\t') {
                self.i += 1;
            }
        }

        fn literal(&mut self, word: &str) {
            for b in word.bytes() {
                self.eat(b);
            }
        }

        fn value(&mut self) {
            match self.peek() {
                b'{' => self.container(b'}', true),
                b'[' => self.container(b']', false),
                b'"' => self.string(),
                b't' => self.literal("true"),
                b'f' => self.literal("false"),
                b'n' => self.literal("null"),
                _ => self.number(),
            }
        }

        fn container(&mut self, close: u8, object: bool) {
            self.i += 1;
            self.ws();
            if self.peek() == close {
                self.i += 1;
                return;
            }
            loop {
                self.ws();
                if object {
                    self.string();
                    self.ws();
                    self.eat(b':');
                    self.ws();
                }
                self.value();
                self.ws();
                if self.peek() == b',' {
                    self.i += 1;
                } else {
                    self.eat(close);
                    return;
                }
            }
        }

        fn string(&mut self) {
            self.eat(b'"');
            loop {
                match self.peek() {
                    b'"' => break,
                    b'\\' => {
                        self.i += 1;
                        match self.peek() {
                            b'u' => {
                                self.i += 1;
                                for _ in 0..4 {
                                    assert!(self.peek().is_ascii_hexdigit(), "bad \\u escape");
                                    self.i += 1;
                                }
                            }
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 1,
                            c => panic!("bad escape \\{} at byte {}", c as char, self.i),
                        }
                    }
                    0..=0x1f => panic!("control character in a string at byte {}", self.i),
                    _ => self.i += 1,
                }
            }
            self.eat(b'"');
        }

        fn number(&mut self) {
            let start = self.i;
            if self.peek() == b'-' {
                self.i += 1;
            }
            let digits = |p: &mut Self| {
                let from = p.i;
                while p.peek().is_ascii_digit() {
                    p.i += 1;
                }
                assert!(p.i > from, "expected a digit at byte {}", p.i);
            };
            digits(self);
            if self.peek() == b'.' {
                self.i += 1;
                digits(self);
            }
            assert!(self.i > start, "expected a value at byte {start}");
        }
    }

    #[test]
    fn the_checker_rejects_broken_json() {
        check("{\"a\": [1, 2.5, \"x\\n\"], \"b\": {}, \"c\": null}");
        for bad in ["{", "{\"a\" 1}", "[1,]", "{\"a\": 1}}", "\"\n\""] {
            assert!(std::panic::catch_unwind(|| check(bad)).is_err(), "{bad:?}");
        }
    }
}

#[test]
fn a_bad_stand_in_version_is_bad_input() {
    let o = cmd(&["--driver", "stand-in"]).env("CUDRV_STANDIN_VERSION", "banana").output().unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("CUDRV_STANDIN_VERSION=\"banana\" is not valid"), "{err}");
}
