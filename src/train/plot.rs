//! The loss curve: a CSV written as training goes, and a PNG drawn with
//! plotters at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;

/// One row of the loss curve: training figures averaged since the previous
/// row, and validation figures on rows written at the end of an epoch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    pub step: u64,
    /// Epochs done, fractional.
    pub epoch: f64,
    /// Training samples seen.
    pub samples: u64,
    pub lr: f64,
    pub train_policy_loss: Option<f64>,
    pub train_value_loss: Option<f64>,
    pub train_accuracy: Option<f64>,
    pub val_policy_loss: Option<f64>,
    pub val_accuracy: Option<f64>,
    pub val_value_loss: Option<f64>,
}

pub const CSV_HEADER: &str = "step,epoch,samples,lr,train_policy_loss,train_value_loss,\
train_accuracy,val_policy_loss,val_policy_accuracy,val_value_loss";

impl Record {
    pub fn csv_line(&self) -> String {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_default();
        format!(
            "{},{:.4},{},{:.3e},{},{},{},{},{},{}",
            self.step,
            self.epoch,
            self.samples,
            self.lr,
            opt(self.train_policy_loss),
            opt(self.train_value_loss),
            opt(self.train_accuracy),
            opt(self.val_policy_loss),
            opt(self.val_accuracy),
            opt(self.val_value_loss),
        )
    }
}

/// The CSV, one row appended (and flushed) per record.
pub struct CsvLog {
    path: PathBuf,
    out: BufWriter<File>,
}

impl CsvLog {
    pub fn create(path: &Path) -> Result<CsvLog, String> {
        let file =
            File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let mut log = CsvLog {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
        };
        log.line(CSV_HEADER)?;
        Ok(log)
    }

    pub fn append(&mut self, record: &Record) -> Result<(), String> {
        self.line(&record.csv_line())
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        writeln!(self.out, "{line}")
            .and_then(|()| self.out.flush())
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

/// The font registered for plotters, if a TTF file was found.
fn font() -> Option<&'static Path> {
    static FONT: OnceLock<Option<PathBuf>> = OnceLock::new();
    FONT.get_or_init(|| {
        let path = find_font(Path::new("/usr/share/fonts"))?;
        let bytes = std::fs::read(&path).ok()?;
        // plotters keeps fonts for the program's lifetime; this is done once.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).ok()?;
        Some(path)
    })
    .as_deref()
}

/// A TTF file under `dir`: DejaVu Sans or Liberation Sans when there, else
/// the first found (in sorted order).
pub fn find_font(dir: &Path) -> Option<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
        if depth > 6 {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out, depth + 1);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e.eq_ignore_ascii_case("ttf"))
            {
                out.push(path);
            }
        }
    }
    let mut fonts = Vec::new();
    walk(dir, &mut fonts, 0);
    fonts.sort();
    for preferred in [
        "DejaVuSans.ttf",
        "LiberationSans-Regular.ttf",
        "FreeSans.ttf",
    ] {
        if let Some(f) = fonts
            .iter()
            .find(|f| f.file_name().is_some_and(|n| n == preferred))
        {
            return Some(f.clone());
        }
    }
    fonts.into_iter().next()
}

/// Draws the curve: losses on the left, policy accuracy on the right.
/// Without a font (none under /usr/share/fonts) the plot has no text.
/// Returns whether text was drawn.
pub fn write_png(path: &Path, records: &[Record]) -> Result<bool, String> {
    let with_text = font().is_some();
    draw(path, records, with_text).map_err(|e| format!("cannot draw {}: {e}", path.display()))?;
    Ok(with_text)
}

/// [`write_png`] with the choice of text made by the caller (tests).
pub fn write_png_with(path: &Path, records: &[Record], with_text: bool) -> Result<(), String> {
    let with_text = with_text && font().is_some();
    draw(path, records, with_text).map_err(|e| format!("cannot draw {}: {e}", path.display()))
}

type Series = (&'static str, RGBColor, Vec<(f64, f64)>, bool);

fn series(records: &[Record], f: impl Fn(&Record) -> Option<f64>) -> Vec<(f64, f64)> {
    records
        .iter()
        .filter_map(|r| f(r).filter(|v| v.is_finite()).map(|v| (r.step as f64, v)))
        .collect()
}

fn draw(
    path: &Path,
    records: &[Record],
    with_text: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (1200, 500)).into_drawing_area();
    root.fill(&WHITE)?;
    let (left, right) = root.split_horizontally(600);
    let max_step = records.iter().map(|r| r.step).max().unwrap_or(1).max(1) as f64;
    let losses: Vec<Series> = vec![
        (
            "train policy",
            BLUE,
            series(records, |r| r.train_policy_loss),
            false,
        ),
        (
            "train value",
            RED,
            series(records, |r| r.train_value_loss),
            false,
        ),
        (
            "val policy",
            RGBColor(0, 150, 0),
            series(records, |r| r.val_policy_loss),
            true,
        ),
        (
            "val value",
            RGBColor(230, 130, 0),
            series(records, |r| r.val_value_loss),
            true,
        ),
    ];
    let accuracy: Vec<Series> = vec![
        (
            "train accuracy",
            BLUE,
            series(records, |r| r.train_accuracy),
            false,
        ),
        (
            "val accuracy",
            RGBColor(0, 150, 0),
            series(records, |r| r.val_accuracy),
            true,
        ),
    ];
    panel(
        &left,
        "loss",
        max_step,
        &losses,
        with_text,
        SeriesLabelPosition::UpperRight,
    )?;
    panel(
        &right,
        "policy accuracy (top-1)",
        max_step,
        &accuracy,
        with_text,
        SeriesLabelPosition::LowerRight,
    )?;
    root.present()?;
    Ok(())
}

fn panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    title: &str,
    max_step: f64,
    lines: &[Series],
    with_text: bool,
    legend: SeriesLabelPosition,
) -> Result<(), Box<dyn std::error::Error>> {
    let max_y = lines
        .iter()
        .flat_map(|l| l.2.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let max_y = if max_y > 0.0 { max_y * 1.05 } else { 1.0 };
    let mut builder = ChartBuilder::on(area);
    builder.margin(15);
    if with_text {
        builder
            .caption(title, ("sans-serif", 20))
            .x_label_area_size(35)
            .y_label_area_size(50);
    }
    let mut chart = builder.build_cartesian_2d(0.0..max_step, 0.0..max_y)?;
    {
        let mut mesh = chart.configure_mesh();
        if with_text {
            mesh.x_desc("step")
                .x_label_formatter(&|x| format!("{}", x.round() as i64))
                .label_style(("sans-serif", 13));
        } else {
            mesh.x_labels(0).y_labels(0);
        }
        mesh.light_line_style(RGBColor(235, 235, 235)).draw()?;
    }
    if !with_text {
        // No labels, so no mesh either: at least a frame.
        chart.draw_series(std::iter::once(Rectangle::new(
            [(0.0, 0.0), (max_step, max_y)],
            BLACK.stroke_width(1),
        )))?;
    }
    for (name, color, points, markers) in lines {
        if points.is_empty() {
            continue;
        }
        let style = color.stroke_width(2);
        let mut line = LineSeries::new(points.iter().copied(), style);
        if *markers {
            line = line.point_size(4);
        }
        let drawn = chart.draw_series(line)?;
        if with_text {
            let color = *color;
            drawn
                .label(*name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        }
    }
    if with_text && lines.iter().any(|l| !l.2.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(legend)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<Record> {
        (1..=20)
            .map(|i| Record {
                step: i * 10,
                epoch: i as f64 / 10.0,
                samples: i * 320,
                lr: 1e-3,
                train_policy_loss: Some(5.0 - i as f64 * 0.1),
                train_value_loss: Some(1.0 - i as f64 * 0.01),
                train_accuracy: Some(i as f64 * 0.01),
                val_policy_loss: (i % 10 == 0).then_some(4.0),
                val_accuracy: (i % 10 == 0).then_some(0.2),
                val_value_loss: (i % 10 == 0).then_some(0.9),
            })
            .collect()
    }

    #[test]
    fn csv_rows_have_every_column() {
        let r = &records()[9];
        let line = r.csv_line();
        assert_eq!(
            line.split(',').count(),
            CSV_HEADER.split(',').count(),
            "{line}"
        );
        let empty = Record::default().csv_line();
        assert_eq!(empty.split(',').count(), CSV_HEADER.split(',').count());
    }

    #[test]
    fn png_with_and_without_text() {
        let dir = tempfile::tempdir().unwrap();
        for with_text in [true, false] {
            let path = dir.path().join(format!("plot-{with_text}.png"));
            write_png_with(&path, &records(), with_text).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(&bytes[1..4], b"PNG");
        }
        // No data at all still gives a picture.
        let path = dir.path().join("empty.png");
        write_png_with(&path, &[], false).unwrap();
        assert!(path.is_file());
    }
}
