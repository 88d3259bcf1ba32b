//! Every implementation config of a check, read and parsed once.
//!
//! Two checks read the configs: the policy scan ([`super::check_configs`],
//! every config, through the prefilter) and the config-against-log check
//! ([`super::config_log`], the package's own configs, every setting). Both
//! read from one [`ParsedConfigs`], and configs with the same bytes and
//! format share one parse: NVIDIA's v5.0 package holds 311 configs with 92
//! distinct contents (the same `config_common.sh` in every system's folder).

use super::configs::{self, Entry, Format};
use super::hydra_package;
use super::sed_edit;
use super::PolicyRules;
use crate::discover::tree::ImplFile;
use crate::finding::{code, Finding};
use std::borrow::Cow;
use std::collections::HashMap;

/// Bytes looked at for a NUL that marks a binary file.
const SNIFF: usize = 8192;

/// What became of one file.
enum Slot {
    /// Not a config (by name), or binary.
    NotConfig,
    /// POL040 (unreadable) or POL041 (too large).
    Failed(Box<Finding>),
    /// Read: its parse (an index into `texts`), when it was parsed, and
    /// whether the policy scan reads it (the prefilter may match).
    Read {
        text: Option<usize>,
        scan: bool,
        /// For a file the prefilter rules out: what its values refer to.
        refs: Option<Box<Refs>>,
    },
}

/// A config the prefilter ruled out whose values refer to environment
/// variables: another config may give one of them a value that matches.
struct Refs {
    /// The variables, as [`interpolate::env_references`] names them.
    names: Vec<String>,
    format: Format,
    /// Where its keys sit ([`hydra_package`]).
    package: Option<Vec<String>>,
    /// Its bytes, when it was not parsed (a vendored config).
    bytes: Option<Vec<u8>>,
}

/// The configs of one check, by their index in the files given to
/// [`ParsedConfigs::read`].
pub struct ParsedConfigs {
    slots: Vec<Slot>,
    texts: Vec<Vec<Entry>>,
    /// Which files sit in a vendored framework tree
    /// ([`super::vendored_files`]).
    vendored: Vec<bool>,
    /// Which files are read as shell though their name says otherwise
    /// (a `.cfg` whose `#!` line names a shell).
    shell_text: Vec<bool>,
}

/// What two files must share to share a parse: their bytes' hash, their
/// format and where their keys sit.
type SameText<'a> = (u64, Format, Option<&'a [String]>);

/// A file read, before parsing.
struct Pending {
    format: Format,
    /// Read as shell for its `#!` line, though its name says otherwise.
    shell_text: bool,
    /// Where its keys sit in the composed config ([`hydra_package`]).
    package: Option<Vec<String>>,
    scan: bool,
    /// Kept when the file is to be parsed.
    bytes: Option<Vec<u8>>,
    refs: Option<Box<Refs>>,
}

impl ParsedConfigs {
    /// Reads `files` in parallel; parses each distinct content the scan or
    /// the config-against-log check needs (a file the prefilter rules out
    /// and that sits in a vendored tree is not parsed).
    pub fn read(rules: &PolicyRules, files: &[ImplFile]) -> ParsedConfigs {
        use rayon::prelude::*;
        let vendored = super::vendored_files(rules, files);
        let pending: Vec<Result<Pending, Slot>> = files
            .par_iter()
            .zip(&vendored)
            .map(|(f, &v)| read_one(rules, f, v))
            .collect();
        // Distinct contents, by hash then by bytes (a collision must not
        // give a file another's settings).
        let mut first: HashMap<SameText, Vec<(usize, usize)>> = HashMap::new();
        let mut to_parse: Vec<(usize, Format)> = Vec::new();
        let mut text_of: Vec<Option<usize>> = vec![None; files.len()];
        for (i, p) in pending.iter().enumerate() {
            let Ok(Pending {
                format,
                bytes: Some(bytes),
                package,
                ..
            }) = p
            else {
                continue;
            };
            let h = content_hash(bytes);
            let same = first.entry((h, *format, package.as_deref())).or_default();
            let found = same.iter().find(|(j, _)| match &pending[*j] {
                Ok(Pending { bytes: Some(b), .. }) => b == bytes,
                _ => false,
            });
            let t = match found {
                Some(&(_, t)) => t,
                None => {
                    let t = to_parse.len();
                    to_parse.push((i, *format));
                    same.push((i, t));
                    t
                }
            };
            text_of[i] = Some(t);
        }
        let texts: Vec<Vec<Entry>> = to_parse
            .par_iter()
            .map(|&(i, format)| match &pending[i] {
                Ok(Pending {
                    bytes: Some(b),
                    package,
                    ..
                }) => hydra_package::under(
                    configs::parse(&String::from_utf8_lossy(b), format),
                    package.as_deref(),
                ),
                _ => Vec::new(),
            })
            .collect();
        // What the implementations' own scripts write with `sed -i` into
        // the files they edit: settings of the script (its own text, no
        // longer shared).
        let mut texts = texts;
        for (i, extra) in sed_settings(rules, files, &vendored, &pending) {
            let mut all = text_of[i]
                .and_then(|t| texts.get(t))
                .cloned()
                .unwrap_or_default();
            all.extend(extra);
            text_of[i] = Some(texts.len());
            texts.push(all);
        }
        let shell_text = pending
            .iter()
            .map(|p| p.as_ref().is_ok_and(|p| p.shell_text))
            .collect();
        let slots = pending
            .into_iter()
            .zip(text_of)
            .map(|(p, text)| match p {
                Ok(p) => Slot::Read {
                    text,
                    scan: p.scan,
                    refs: p.refs,
                },
                Err(slot) => slot,
            })
            .collect();
        ParsedConfigs {
            slots,
            texts,
            vendored,
            shell_text,
        }
    }

    /// Whether file `i` is read as a shell script though its name says
    /// otherwise ([`ParsedConfigs::is_shell`]).
    pub fn shell_text(&self, i: usize) -> bool {
        self.shell_text.get(i).copied().unwrap_or(false)
    }

    /// Whether file `i` (named `name`) is read as a shell script: by its
    /// name, or by its `#!` line where the name says INI (Habana's
    /// `defaults.cfg`, which the launch scripts source).
    pub fn is_shell(&self, rules: &PolicyRules, i: usize, name: &str) -> bool {
        self.shell_text(i) || rules.signals.config_files.format(name) == Some(Format::Shell)
    }

    /// Whether file `i` sits in a vendored framework tree (a file not
    /// read here counts as the implementation's own).
    pub fn vendored(&self, i: usize) -> bool {
        self.vendored.get(i).copied().unwrap_or(false)
    }

    /// What the policy scan reads of file `i`: `None` for a file that is
    /// not a config, `Err` its POL040/POL041 finding, else its settings
    /// (none when the prefilter rules the file out).
    pub fn for_scan(&self, i: usize) -> Option<Result<&[Entry], &Finding>> {
        match self.slots.get(i)? {
            Slot::NotConfig => None,
            Slot::Failed(f) => Some(Err(&**f)),
            Slot::Read { scan: false, .. } => Some(Ok(&[])),
            Slot::Read {
                text, scan: true, ..
            } => Some(Ok(self.text(*text))),
        }
    }

    /// Every setting of file `i`, when it was read and parsed (always for
    /// a config outside vendored trees).
    pub fn entries(&self, i: usize) -> Option<&[Entry]> {
        match self.slots.get(i)? {
            Slot::Read { text: Some(t), .. } => self.texts.get(*t).map(Vec::as_slice),
            _ => None,
        }
    }

    /// Configs whose settings come from elsewhere (a cache): `own` holds
    /// the settings of some of the `n` files, by index; only
    /// [`ParsedConfigs::entries`] answers for them. `vendored`: which
    /// files sit in a vendored tree, as [`super::vendored_files`] said
    /// when the settings were read (worked out again unless it has one
    /// flag per file).
    pub fn from_entries(
        rules: &PolicyRules,
        files: &[ImplFile],
        own: Vec<(usize, Vec<Entry>)>,
        vendored: Vec<bool>,
    ) -> ParsedConfigs {
        let mut slots: Vec<Slot> = (0..files.len()).map(|_| Slot::NotConfig).collect();
        let mut texts = Vec::with_capacity(own.len());
        for (i, entries) in own {
            if let Some(slot) = slots.get_mut(i) {
                *slot = Slot::Read {
                    text: Some(texts.len()),
                    scan: false,
                    refs: None,
                };
                texts.push(entries);
            }
        }
        let vendored = if vendored.len() == files.len() {
            vendored
        } else {
            super::vendored_files(rules, files)
        };
        ParsedConfigs {
            slots,
            texts,
            vendored,
            shell_text: Vec::new(),
        }
    }

    /// The settings of every config outside vendored trees, by index:
    /// what the config-against-log checks read ([`ParsedConfigs::entries`]).
    pub fn own_entries(&self, files: &[ImplFile]) -> Vec<(usize, Vec<Entry>)> {
        (0..files.len())
            .filter(|&i| !self.vendored(i))
            .filter_map(|i| self.entries(i).map(|e| (i, e.to_vec())))
            .collect()
    }

    /// For a config the prefilter ruled out: the environment variables
    /// its values refer to (none for a file that was scanned).
    pub fn references(&self, i: usize) -> &[String] {
        match self.slots.get(i) {
            Some(Slot::Read {
                scan: false,
                refs: Some(r),
                ..
            }) => &r.names,
            _ => &[],
        }
    }

    /// Every setting of a config the prefilter ruled out but whose values
    /// refer to variables ([`ParsedConfigs::references`]), parsed now when
    /// it was not before.
    pub fn referring(&self, i: usize) -> Option<Cow<'_, [Entry]>> {
        let Some(Slot::Read {
            text,
            scan: false,
            refs: Some(r),
        }) = self.slots.get(i)
        else {
            return None;
        };
        match (&r.bytes, text) {
            (Some(b), _) => Some(Cow::Owned(hydra_package::under(
                configs::parse(&String::from_utf8_lossy(b), r.format),
                r.package.as_deref(),
            ))),
            (None, Some(t)) => self.texts.get(*t).map(|e| Cow::Borrowed(e.as_slice())),
            (None, None) => None,
        }
    }

    fn text(&self, t: Option<usize>) -> &[Entry] {
        t.and_then(|t| self.texts.get(t)).map_or(&[], Vec::as_slice)
    }
}

/// The settings the `sed -i` lines of each script outside vendored trees
/// write into the files of its implementation they edit
/// ([`sed_edit`]), by the script's index.
fn sed_settings(
    rules: &PolicyRules,
    files: &[ImplFile],
    vendored: &[bool],
    pending: &[Result<Pending, Slot>],
) -> Vec<(usize, Vec<Entry>)> {
    let mut out = Vec::new();
    for (i, p) in pending.iter().enumerate() {
        let Ok(Pending {
            format: Format::Shell,
            bytes: Some(b),
            ..
        }) = p
        else {
            continue;
        };
        if vendored.get(i).copied().unwrap_or(true) || memchr::memmem::find(b, b"sed").is_none() {
            continue;
        }
        let mut extra = Vec::new();
        for l in sed_edit::in_place_lines(&String::from_utf8_lossy(b)) {
            let shown: Vec<&str> = l.edits.iter().map(|e| e.display.as_str()).collect();
            let shown = shown.join(" ");
            for t in &l.targets {
                let Some(j) = sed_edit::target_of(files, i, t) else {
                    continue;
                };
                let Some(Ok(target)) = pending.get(j) else {
                    continue;
                };
                if !sed_edit::followed(target.format) {
                    continue;
                }
                let bytes = match &target.bytes {
                    Some(b) => Cow::Borrowed(b.as_slice()),
                    None => match crate::safe_io::read_walked(
                        &files[j].file.fs,
                        rules.signals.config_files.max_bytes,
                    ) {
                        Ok(crate::safe_io::Walked::Bytes(b)) => Cow::Owned(b),
                        _ => continue,
                    },
                };
                let before = String::from_utf8_lossy(&bytes);
                let Some(after) = sed_edit::edited(&l.edits, &before) else {
                    continue;
                };
                let parse = |text: &str| {
                    hydra_package::under(
                        configs::parse(text, target.format),
                        target.package.as_deref(),
                    )
                };
                extra.extend(sed_edit::new_settings(
                    &parse(&before),
                    &parse(&after),
                    l.line,
                    &shown,
                    t,
                ));
            }
        }
        if !extra.is_empty() {
            out.push((i, extra));
        }
    }
    out
}

/// The text of UTF-16 bytes that open with a byte order mark, else `None`.
fn utf16_text(b: &[u8]) -> Option<String> {
    let little = match b {
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        _ => return None,
    };
    let units = b[2..].chunks_exact(2).map(|c| {
        let pair = [c[0], c[1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    Some(
        char::decode_utf16(units)
            .map(|c| c.unwrap_or('\u{FFFD}'))
            .collect(),
    )
}

fn content_hash(b: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(b)
}

/// Reads one implementation file: `Err` for a file that is not a config,
/// is binary, or cannot be read (with its finding).
fn read_one(rules: &PolicyRules, f: &ImplFile, vendored: bool) -> Result<Pending, Slot> {
    let cf = &rules.signals.config_files;
    let name = f
        .file
        .fs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if cf.skipped(&name) {
        return Err(Slot::NotConfig);
    }
    // A script named without an ending (`run_multinode`) is read when its
    // `#!` line names a shell.
    let by_name = cf.format(&name);
    if by_name.is_none() && !cf.may_be_script(&name) {
        return Err(Slot::NotConfig);
    }
    let format = by_name.unwrap_or(Format::Shell);
    let path = f.file.path.as_str();
    let unreadable = |e: std::io::Error| {
        Slot::Failed(Box::new(
            Finding::of(
                code::POL040,
                path,
                format!("cannot read the implementation config: {e}"),
            )
            .with_help(rules.help(code::POL040)),
        ))
    };
    let read = crate::safe_io::read_walked(&f.file.fs, cf.max_bytes);
    if by_name.is_none() && !matches!(read, Ok(crate::safe_io::Walked::Bytes(_))) {
        // Not known to be a config: nothing to report.
        return Err(Slot::NotConfig);
    }
    let bytes = match read.map_err(unreadable)? {
        crate::safe_io::Walked::Bytes(b) => b,
        crate::safe_io::Walked::TooBig(len) => {
            return Err(Slot::Failed(Box::new(
                Finding::of(
                    code::POL041,
                    path,
                    format!(
                        "implementation config not scanned for policy signals: {len} bytes, the limit is {}",
                        cf.max_bytes
                    ),
                )
                .with_help(rules.help(code::POL041))
                .with_rule(rules.signal_rule("config_files")),
            )))
        }
    };
    // A config saved as UTF-16 (Windows editors; its NULs would make it
    // binary) is read as the text it is.
    let bytes = utf16_text(&bytes).map_or(bytes, String::into_bytes);
    if memchr::memchr(0, &bytes[..bytes.len().min(SNIFF)]).is_some()
        || (by_name.is_none() && !cf.is_shell_script(&bytes))
    {
        return Err(Slot::NotConfig);
    }
    // An INI-named file that opens with a shell's `#!` line is a script
    // (Habana's `defaults.cfg`: `export`, `: ${X:=v}`, `mpirun -x`).
    let shell_text = format == Format::Ini && cf.is_shell_script(&bytes);
    let format = if shell_text { Format::Shell } else { format };
    // Shell files are always read: their assignments resolve variables in
    // the other configs. So is every config outside vendored trees (it is
    // parsed for the config-against-log check anyway): a setting's key
    // path joins its parents' keys, which may sit lines apart in the text
    // (`comm:`, `name: x`, `dtype: int8`), where no look at the text alone
    // can see `comm_dtype`. A vendored framework tree (thousands of
    // upstream examples, whose settings are notes) is read only where the
    // prefilter finds each of a setting's words as a run of the text.
    let scan = format == Format::Shell || !vendored || rules.prefilter.may_match(&bytes, false);
    let package = (format == Format::Yaml)
        .then(|| hydra_package::package(path, &bytes, &cf.hydra_groups))
        .flatten();
    // A file ruled out may still take a value from a variable another
    // config sets: what it refers to is kept (with its bytes, when they
    // would not be parsed), for when the variables are known.
    let mut refs = if scan {
        None
    } else {
        let names = super::interpolate::env_references(&bytes);
        (!names.is_empty()).then(|| {
            Box::new(Refs {
                names,
                format,
                package: package.clone(),
                bytes: None,
            })
        })
    };
    let keep = scan || !vendored;
    let bytes = match refs.as_mut() {
        Some(r) if !keep => {
            r.bytes = Some(bytes);
            None
        }
        _ => keep.then_some(bytes),
    };
    Ok(Pending {
        format,
        shell_text,
        package,
        scan,
        bytes,
        refs,
    })
}
