//! Expert-parallel figures (chapters 12-13): which experts tokens choose, the two-hop path of one
//! token, and a world's phases on its modelled clock.

use super::Svg;
use super::style::{self, HPos, INK, MUTED, PALETTE, Pos, VPos, lighten, render, text_width};
use crate::ep::HostRouting;
use gpubook::ep::{Link, Topology, WorldTimeline};
use plotters::prelude::*;

/// The column width every figure here is drawn for.
const WIDTH: u32 = style::COLUMN;
const NVLINK: RGBColor = RGBColor(0x76, 0xb7, 0xb2);
const IB: RGBColor = RGBColor(0xf2, 0x8e, 0x2b);

fn node_color(n: usize) -> RGBColor {
    PALETTE[n % PALETTE.len()]
}

/// Tokens × experts: a filled cell is a chosen expert, in its node's colour; the column on the
/// right counts the nodes the token reaches. One panel per routing, stacked (e.g. without and
/// with a node limit). Draws the first 16 tokens and at most 64 experts.
pub fn routing_svg(panels: &[(&str, &HostRouting)], topo: Topology, experts: usize) -> Svg {
    let tokens = panels.iter().map(|(_, r)| r.tokens()).min().unwrap_or(0).min(16);
    let cols = experts.min(64);
    let (left, right) = (70, 80);
    let cell_w = ((WIDTH as i32 - left - right) / cols.max(1) as i32).max(4);
    let cell_h = 16;
    let panel_h = 44 + tokens as i32 * cell_h + 12;
    let height = (50 + panels.len() as i32 * panel_h + 30) as u32;
    let per_node = experts / topo.nodes();
    render(WIDTH, height, |area| {
        area.draw(&Text::new(
            "Which experts each token chose",
            (14, 22),
            style::text(style::TITLE, INK, Pos::new(HPos::Left, VPos::Center)),
        ))?;
        for (p, (name, routing)) in panels.iter().enumerate() {
            let y0 = 50 + p as i32 * panel_h;
            area.draw(&Text::new(name.to_string(), (14, y0 + 8), style::label(style::LABEL)))?;
            // Node headers over their experts.
            for n in 0..topo.nodes() {
                let x = left + (n * per_node) as i32 * cell_w;
                let w = (per_node.min(cols.saturating_sub(n * per_node))) as i32 * cell_w;
                if w <= 0 {
                    continue;
                }
                area.draw(&Rectangle::new([(x, y0 + 20), (x + w - 1, y0 + 34)], lighten(node_color(n), 0.55).filled()))?;
                let words = if w > 60 { format!("node {n}") } else { format!("{n}") };
                area.draw(&Text::new(words, (x + w / 2, y0 + 27), style::text(style::SMALL, INK, Pos::new(HPos::Center, VPos::Center))))?;
            }
            area.draw(&Text::new("nodes", (left + cols as i32 * cell_w + 10, y0 + 27), style::muted(style::SMALL)))?;
            for t in 0..tokens {
                let y = y0 + 40 + t as i32 * cell_h;
                area.draw(&Text::new(
                    format!("token {t}"),
                    (left - 8, y + cell_h / 2),
                    style::text(style::SMALL, INK, Pos::new(HPos::Right, VPos::Center)),
                ))?;
                let chosen = routing.experts_of(t);
                for e in 0..cols {
                    let x = left + e as i32 * cell_w;
                    let fill = if chosen.contains(&(e as i32)) { node_color(e / per_node) } else { style::IDLE };
                    area.draw(&Rectangle::new([(x, y), (x + cell_w - 1, y + cell_h - 2)], fill.filled()))?;
                }
                let mut nodes: Vec<usize> = chosen.iter().map(|&e| e as usize / per_node).collect();
                nodes.sort();
                nodes.dedup();
                area.draw(&Text::new(
                    format!("{}", nodes.len()),
                    (left + cols as i32 * cell_w + 24, y + cell_h / 2),
                    style::label(style::LABEL),
                ))?;
            }
        }
        let note = format!(
            "{} experts on {} node{} ({} per node), top-{}; filled: chosen, in its node's colour",
            experts,
            topo.nodes(),
            if topo.nodes() == 1 { "" } else { "s" },
            per_node,
            panels.first().map(|(_, r)| r.topk).unwrap_or(0)
        );
        area.draw(&Text::new(note, (14, height as i32 - 16), style::muted(style::SMALL)))?;
        Ok(())
    })
}

/// One token's two hops: from its rank (a, l) over IB to rank (b, l) of each node b holding one
/// of its experts (for its own node, a copy in its own memory), then over NVLink to the ranks
/// there that hold them. `experts_of_token` are global expert numbers.
pub fn two_hop_svg(topo: Topology, experts: usize, src: usize, experts_of_token: &[i32]) -> Svg {
    let (n_nodes, g) = (topo.nodes().min(4), topo.gpus_per_node().min(8));
    let per_rank = experts / topo.ranks();
    let box_w = (WIDTH as i32 - 40 - (n_nodes as i32 - 1) * 30) / n_nodes.max(1) as i32;
    let gpu_h = 30;
    let top = 70;
    let height = (top + 30 + g as i32 * (gpu_h + 8) + 90) as u32;
    let (a, l) = (topo.node_of(src), topo.local_of(src));
    let mut ranks: Vec<usize> = experts_of_token.iter().map(|&e| e as usize / per_rank).collect();
    ranks.sort();
    ranks.dedup();
    let mut nodes: Vec<usize> = ranks.iter().map(|&d| topo.node_of(d)).collect();
    nodes.dedup();
    let gpu_box = |n: usize, gi: usize| {
        let x = 20 + n as i32 * (box_w + 30) + 14;
        let y = top + 30 + gi as i32 * (gpu_h + 8);
        (x, y, x + box_w - 28, y + gpu_h)
    };
    render(WIDTH, height, |area| {
        let title = format!("Two hops for one token of rank {src} (GPU {l} of node {a})");
        area.draw(&Text::new(title, (14, 22), style::text(style::TITLE, INK, Pos::new(HPos::Left, VPos::Center))))?;
        let ib = nodes.iter().filter(|&&b| b != a).count();
        let nv = ranks.iter().filter(|&&d| topo.local_of(d) != l).count();
        let direct = ranks.iter().filter(|&&d| !topo.same_node(d, src)).count();
        let sub = format!(
            "experts {:?}: {ib} IB message{} (one per other node), {nv} over NVLink; straight to each rank: {direct} over IB",
            experts_of_token,
            if ib == 1 { "" } else { "s" }
        );
        area.draw(&Text::new(sub, (14, 46), style::muted(style::SMALL)))?;
        for n in 0..n_nodes {
            let x = 20 + n as i32 * (box_w + 30);
            area.draw(&Rectangle::new(
                [(x, top), (x + box_w, top + 30 + g as i32 * (gpu_h + 8) + 4)],
                lighten(node_color(n), 0.8).filled(),
            ))?;
            area.draw(&Text::new(format!("node {n}"), (x + 8, top + 14), style::label(style::LABEL)))?;
            for gi in 0..g {
                let d = topo.rank(n, gi);
                let (x0, y0, x1, y1) = gpu_box(n, gi);
                let holds: Vec<i32> = experts_of_token.iter().copied().filter(|&e| e as usize / per_rank == d).collect();
                let fill = if d == src {
                    node_color(n)
                } else if holds.is_empty() {
                    WHITE
                } else {
                    lighten(node_color(n), 0.45)
                };
                area.draw(&Rectangle::new([(x0, y0), (x1, y1)], fill.filled()))?;
                area.draw(&Rectangle::new([(x0, y0), (x1, y1)], INK.stroke_width(1)))?;
                let mut words = format!("GPU {gi} (rank {d})");
                if !holds.is_empty() {
                    words += &format!(": e{}", holds.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", e"));
                }
                let color = if d == src { WHITE } else { INK };
                area.draw(&Text::new(
                    words,
                    (x0 + 6, (y0 + y1) / 2),
                    style::text(style::SMALL, color, Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
        }
        // Hop 1: IB to the same-index GPU of every other node reached.
        let (sx0, sy0, sx1, sy1) = gpu_box(a, l);
        for &b in nodes.iter().filter(|&&b| b != a && b < n_nodes) {
            let (tx0, ty0, tx1, ty1) = gpu_box(b, l);
            let (from, to) =
                if b > a { ((sx1, (sy0 + sy1) / 2), (tx0, (ty0 + ty1) / 2)) } else { ((sx0, (sy0 + sy1) / 2), (tx1, (ty0 + ty1) / 2)) };
            let lift = top - 8;
            let path = vec![from, (from.0, lift), (to.0, lift), to];
            area.draw(&PathElement::new(path, IB.stroke_width(3)))?;
            area.draw(&Circle::new(to, 4, IB.filled()))?;
        }
        // Hop 2: NVLink inside each node reached, from GPU l to the GPUs holding experts.
        for &b in nodes.iter().filter(|&&b| b < n_nodes) {
            let (fx0, fy0, _, fy1) = gpu_box(b, l);
            for &d in ranks.iter().filter(|&&d| topo.node_of(d) == b && topo.local_of(d) != l && topo.local_of(d) < g) {
                let (tx0, ty0, _, ty1) = gpu_box(b, topo.local_of(d));
                let x = fx0 - 8;
                let path = vec![(fx0, (fy0 + fy1) / 2), (x, (fy0 + fy1) / 2), (x, (ty0 + ty1) / 2), (tx0, (ty0 + ty1) / 2)];
                area.draw(&PathElement::new(path, NVLINK.stroke_width(3)))?;
                area.draw(&Circle::new((tx0, (ty0 + ty1) / 2), 4, NVLINK.filled()))?;
            }
        }
        let y = height as i32 - 22;
        let mut x = 20;
        x = style::legend_entry(area, x, y, IB, "hop 1: InfiniBand, to the GPU with the sender's index")?;
        style::legend_entry(area, x, y, NVLINK, "hop 2: NVLink")?;
        Ok(())
    })
}

/// A world's phases: per rank, its kernels (their times as the device gave them) and, under
/// them, how long its NVLink and its NIC are busy (modelled). Phases are numbered on top and
/// named under the chart. Draws at most 16 ranks.
pub fn world_timeline_svg(t: &WorldTimeline, title: &str) -> Svg {
    let ranks = t.ranks().min(16);
    let row = 40;
    let (left, right) = (86, 16);
    let top = 76;
    let names_h = 18 * t.phases.len() as i32 + 8;
    let height = (top + ranks as i32 * row + 40 + names_h + 34) as u32;
    let total = t.total_us().max(1e-9);
    let plot_w = WIDTH as i32 - left - right;
    let px = |us: f64| left + (us / total * plot_w as f64).round() as i32;
    render(WIDTH, height, |area| {
        area.draw(&Text::new(title.to_string(), (14, 20), style::text(style::TITLE, INK, Pos::new(HPos::Left, VPos::Center))))?;
        let sub = format!("kernels: {}; links modelled: NVLink {} GB/s, IB {} GB/s", t.kernels_from, t.links.nvlink_gb_s, t.links.ib_gb_s);
        area.draw(&Text::new(sub, (14, 40), style::muted(style::SMALL)))?;
        for (i, p) in t.phases.iter().enumerate() {
            let (x0, x1) = (px(p.start_us), px(p.start_us + p.span_us()));
            area.draw(&Rectangle::new(
                [(x0, top - 14), (x1.max(x0 + 1), top + ranks as i32 * row)],
                lighten(style::IDLE, if i % 2 == 0 { 0.6 } else { 0.2 }).filled(),
            ))?;
            if x1 - x0 >= 14 {
                area.draw(&Text::new(
                    format!("{}", i + 1),
                    ((x0 + x1) / 2, top - 7),
                    style::text(style::SMALL, INK, Pos::new(HPos::Center, VPos::Center)),
                ))?;
            }
        }
        for r in 0..ranks {
            let y = top + r as i32 * row;
            let name = format!("rank {r} · n{}", r / t.gpus_per_node);
            area.draw(&Text::new(name, (left - 6, y + 12), style::text(style::SMALL, INK, Pos::new(HPos::Right, VPos::Center))))?;
            for p in &t.phases {
                let rp = &p.ranks[r];
                let mut at = p.start_us;
                for (k, (_, us)) in rp.kernels.iter().enumerate() {
                    let (x0, x1) = (px(at), px(at + us));
                    let shade = lighten(style::KERNEL, if k % 2 == 0 { 0.0 } else { 0.3 });
                    area.draw(&Rectangle::new([(x0, y + 4), (x1.max(x0 + 1), y + 20)], shade.filled()))?;
                    area.draw(&Rectangle::new([(x0, y + 4), (x1.max(x0 + 1), y + 20)], WHITE.stroke_width(1)))?;
                    at += us;
                }
                for (link, us, dy) in [(Link::NvLink, rp.nvlink_us, 23), (Link::Ib, rp.ib_us, 31)] {
                    if us > 0.0 {
                        let color = if link == Link::NvLink { NVLINK } else { IB };
                        let (x0, x1) = (px(p.start_us), px(p.start_us + us));
                        area.draw(&Rectangle::new([(x0, y + dy), (x1.max(x0 + 2), y + dy + 6)], color.filled()))?;
                    }
                }
            }
        }
        // Time axis.
        let axis_y = top + ranks as i32 * row + 6;
        area.draw(&PathElement::new(vec![(left, axis_y), (left + plot_w, axis_y)], MUTED.stroke_width(1)))?;
        let (scale, unit) = if total >= 5_000.0 { (1e-3, "ms") } else { (1.0, "µs") };
        let step = nice_step(total * scale / 6.0);
        let mut v = 0.0;
        while v <= total * scale + 1e-9 {
            let x = px(v / scale);
            area.draw(&PathElement::new(vec![(x, axis_y), (x, axis_y + 4)], MUTED.stroke_width(1)))?;
            area.draw(&Text::new(fmt_tick(v), (x, axis_y + 13), style::text(style::SMALL, MUTED, Pos::new(HPos::Center, VPos::Center))))?;
            v += step;
        }
        area.draw(&Text::new(
            format!("modelled time ({unit})"),
            (left + plot_w, axis_y + 28),
            style::text(style::SMALL, MUTED, Pos::new(HPos::Right, VPos::Center)),
        ))?;
        let mut y = axis_y + 44;
        for (i, p) in t.phases.iter().enumerate() {
            let link = if p.link_us() > 0.0 { format!(", links {:.1} µs", p.link_us()) } else { String::new() };
            let words = format!("{}  {}: kernels {:.1} µs{link}", i + 1, p.label, p.kernel_us());
            let words = if text_width(&words, style::SMALL) > WIDTH as i32 - 40 {
                format!("{}…", &words[..(words.len() * 3 / 4)])
            } else {
                words
            };
            area.draw(&Text::new(words, (20, y), style::label(style::SMALL)))?;
            y += 18;
        }
        let mut x = 20;
        x = style::legend_entry(area, x, y + 8, style::KERNEL, "kernels")?;
        x = style::legend_entry(area, x, y + 8, NVLINK, "NVLink busy (modelled)")?;
        style::legend_entry(area, x, y + 8, IB, "IB busy (modelled)")?;
        Ok(())
    })
}

fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.max(1e-9).log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * p).find(|s| *s >= raw).unwrap_or(10.0 * p)
}

fn fmt_tick(v: f64) -> String {
    if v >= 100.0 || v == v.round() { format!("{v:.0}") } else { format!("{v:.1}") }
}
