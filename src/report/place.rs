//! Where a finding goes in tools that need a file and a line (SARIF, GitHub
//! annotations): a finding about a log keeps its place (line 1 when it has
//! none); a finding about a benchmark folder goes to the folder's first
//! result log, or to the system description when the folder has no log; a
//! finding about another folder goes to the first log under it. The
//! finding's own path is kept beside (`moved_from`).

use super::Report;
use crate::finding::Finding;

/// A file and a 1-based line for a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: String,
    pub line: u64,
    /// The finding's own path when it is about a folder and was placed on
    /// a file in it.
    pub moved_from: Option<String>,
}

/// The place of `f` in `report`.
pub fn place(report: &Report, f: &Finding) -> Place {
    let line = f.line.filter(|l| *l > 0).unwrap_or(1);
    let under = |dir: &str| {
        report
            .logs
            .iter()
            .map(|l| l.path.as_str())
            .filter(|p| p.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
            .min()
            .map(str::to_string)
    };
    if report.logs.iter().any(|l| l.path == f.path) {
        return Place {
            path: f.path.clone(),
            line,
            moved_from: None,
        };
    }
    let folder = report.benchmarks.iter().find(|b| b.path == f.path);
    let target = under(&f.path).or_else(|| folder.and_then(|b| system_description(&b.path)));
    match target {
        Some(path) => Place {
            path,
            line: 1,
            moved_from: Some(f.path.clone()),
        },
        None => Place {
            path: f.path.clone(),
            line,
            moved_from: None,
        },
    }
}

/// `Org/systems/sys.json` for the folder `Org/results/sys/bert`.
fn system_description(folder: &str) -> Option<String> {
    let (rest, _benchmark) = folder.rsplit_once('/')?;
    let (results, system) = rest.rsplit_once('/')?;
    let package = match results.strip_suffix("results") {
        Some("") => "",
        Some(p) => p.strip_suffix('/')?,
        None => return None,
    };
    Some(if package.is_empty() {
        format!("systems/{system}.json")
    } else {
        format!("{package}/systems/{system}.json")
    })
}

#[cfg(test)]
mod tests {
    use super::system_description;

    #[test]
    fn a_folder_has_its_system_description() {
        assert_eq!(
            system_description("Org/results/sys/bert").as_deref(),
            Some("Org/systems/sys.json")
        );
        assert_eq!(
            system_description("results/sys/bert").as_deref(),
            Some("systems/sys.json")
        );
        assert_eq!(system_description("a/b/c"), None);
    }
}
