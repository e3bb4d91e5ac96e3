//! Server-drawn SVG bar charts (no script, no inline style: CSP-clean), one bar per label.

use maud::{html, Markup};

const WIDTH: f64 = 640.0;
/// The phone's chart: as wide as a phone's column (drawn at about 1:1, so its 12-unit labels
/// read as 12 px), each label above its bar.
const NARROW: f64 = 350.0;
const BAR: f64 = 18.0;
const GAP: f64 = 6.0;
const LABEL: f64 = 220.0;
/// More bars than this are summed into the last one ("N more").
const MAX_BARS: usize = 24;

/// Horizontal bars of `values`, labelled, with `title` read out to screen readers.
pub(super) fn bars(title: &str, values: &[(String, i64)]) -> Markup {
    let mut shown: Vec<(String, i64)> = values.iter().take(MAX_BARS).cloned().collect();
    if values.len() > MAX_BARS {
        let rest: i64 = values[MAX_BARS..].iter().map(|(_, v)| v).sum();
        shown.push((format!("{} more", values.len() - MAX_BARS), rest));
    }
    let max = shown.iter().map(|(_, v)| *v).max().unwrap_or(0).max(1) as f64;
    let height = shown.len() as f64 * (BAR + GAP) + GAP;
    let span = WIDTH - LABEL - 70.0;
    html! {
        figure.chart {
            figcaption { (title) }
            svg.chart.wide viewBox={ "0 0 " (WIDTH) " " (height) } role="img" aria-label=(title) xmlns="http://www.w3.org/2000/svg" {
                title { (title) }
                @for (i, (label, value)) in shown.iter().enumerate() {
                    @let y = GAP + i as f64 * (BAR + GAP);
                    @let w = (*value as f64 / max * span).max(1.0);
                    text x="4" y=(y + BAR * 0.72) { (short(label)) }
                    rect.bar x=(LABEL) y=(y) width=(format!("{w:.1}")) height=(BAR) rx="2" {}
                    text x=(format!("{:.1}", LABEL + w + 6.0)) y=(y + BAR * 0.72) { (count(*value)) }
                }
            }
            (narrow(title, &shown, max))
        }
    }
}

/// The same bars for a phone: the label on its own line, the bar under it.
fn narrow(title: &str, shown: &[(String, i64)], max: f64) -> Markup {
    const LINE: f64 = 15.0;
    let row = LINE + BAR + GAP;
    let height = shown.len() as f64 * row + GAP;
    let span = NARROW - 70.0;
    html! {
        svg.chart.narrow viewBox={ "0 0 " (NARROW) " " (height) } role="img" aria-label=(title) xmlns="http://www.w3.org/2000/svg" {
            title { (title) }
            @for (i, (label, value)) in shown.iter().enumerate() {
                @let y = GAP + i as f64 * row;
                @let w = (*value as f64 / max * span).max(1.0);
                text x="2" y=(y + LINE - 3.0) { (short(label)) }
                rect.bar x="2" y=(y + LINE) width=(format!("{w:.1}")) height=(BAR) rx="2" {}
                text x=(format!("{:.1}", w + 8.0)) y=(y + LINE + BAR * 0.72) { (count(*value)) }
            }
        }
    }
}

/// A bar's value for people (`1,000`; never negative).
fn count(v: i64) -> String {
    crate::web::format::count(v.max(0) as u64)
}

fn short(label: &str) -> String {
    if label.chars().count() <= 34 {
        return label.to_string();
    }
    let tail: String = label
        .chars()
        .rev()
        .take(33)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("…{tail}")
}
