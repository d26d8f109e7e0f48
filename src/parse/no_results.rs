//! Why an input holds no results: ncu logs, text reports, other pages, binary files.
//! Scanning keeps only flags and a few lines, so a huge wrong file costs no memory.

/// What the scan saw before the end of the input, for a specific message.
#[derive(Debug, Default)]
pub(super) struct Scan {
    lines: u64,
    non_blank: u64,
    binary: bool,
    ctr_perm: bool,
    no_kernels: bool,
    text_report: bool,
    query_metrics: bool,
    source_page: bool,
    first_error: Option<String>,
    pub warnings: Vec<String>,
}

impl Scan {
    /// Look at one line before the CSV header (or of an input that has none).
    pub(super) fn line(&mut self, line: &str) {
        self.lines += 1;
        let t = line.trim();
        if t.is_empty() {
            return;
        }
        self.non_blank += 1;
        if t.contains("ERR_NVGPUCTRPERM") {
            self.ctr_perm = true;
        }
        if t.contains("No kernels were profiled") {
            self.no_kernels = true;
        }
        if let Some(pos) = t.find("==ERROR==") {
            let msg = t[pos + "==ERROR==".len()..].trim().to_string();
            if self.first_error.is_none() {
                self.first_error = Some(msg.clone());
            }
            if self.warnings.len() < 8 {
                self.warnings.push(format!("ncu: {msg}"));
            }
        }
        if t.starts_with("Section:") || t.starts_with("==PROF== Profiling") || t.starts_with("----") {
            self.text_report = true;
        }
        if t.starts_with("Metric Name") && t.contains("Metric Type") || t.contains("--query-metrics-mode") {
            self.query_metrics = true;
        }
        if t.starts_with("\"Address\",\"Source\"") || t.starts_with("\"Kernel Name\",") {
            self.source_page = true;
        }
    }

    pub(super) fn binary(&mut self) {
        self.binary = true;
    }

    /// The one-line reason this input has no results.
    pub(super) fn reason(&self) -> String {
        if self.binary {
            return "not a text file (binary data): coalprof reads ncu's CSV output or an .ncu-rep report".into();
        }
        if self.non_blank == 0 {
            return "the file is empty".into();
        }
        if self.ctr_perm {
            return "ncu was not permitted to read the GPU performance counters (ERR_NVGPUCTRPERM): this log holds no results".into();
        }
        if self.no_kernels {
            return "ncu profiled no kernels (`No kernels were profiled`): this log holds no results".into();
        }
        if self.query_metrics {
            return "this is ncu's metric catalogue (`--query-metrics`), not a report".into();
        }
        if self.source_page {
            return "this is ncu's source page; coalprof reads the raw or details page".into();
        }
        if self.text_report {
            return "this is ncu's text output, not CSV".into();
        }
        if let Some(e) = &self.first_error {
            return format!("ncu reported an error and no results: {e}");
        }
        "no ncu CSV header found (a line starting with \"ID\",\"Process ID\")".into()
    }

    /// How to get an input coalprof can read, for the reason above.
    pub(super) fn hint(&self) -> &'static str {
        if self.ctr_perm {
            return "enable counter access (https://developer.nvidia.com/ERR_NVGPUCTRPERM) and profile again";
        }
        "export CSV with `ncu --import REPORT.ncu-rep --csv --page raw --print-units base > report.csv`, or pass the .ncu-rep itself"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Scan {
        let mut s = Scan::default();
        text.lines().for_each(|l| s.line(l));
        s
    }

    #[test]
    fn specific_reasons() {
        assert!(scan("").reason().contains("empty"));
        assert!(scan("==ERROR== Error: ERR_NVGPUCTRPERM - The user").reason().contains("ERR_NVGPUCTRPERM"));
        assert!(scan("==WARNING== No kernels were profiled.").reason().contains("no kernels"));
        assert!(scan("    Section: GPU Speed Of Light").reason().contains("text output"));
        assert!(scan("hello\nworld").reason().contains("no ncu CSV header"));
    }
}
