// `cuzk waterfall LOG --svg FILE`: the waterfall as a hand-written SVG chart. One lane per worker,
// painted with the lane's States; each proof's bar carries a darker band as long as the share of it
// the device's kernels were busy (kernel_ms / wall); a time axis, a legend and a title.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "timeline/events.hpp"
#include "waterfall.hpp"

namespace cuzk::cli::timeline {

namespace {

constexpr double kWidth = 1200, kLeft = 170, kRight = 24, kTop = 70, kLaneH = 30, kLaneGap = 8;
constexpr const char* kKernelColour = "#5b2a7e";

const char* colour(State s) {
  switch (s) {
    case State::Witness: return "#4e79a7";
    case State::Eval: return "#59a14f";
    case State::SynthOther: return "#a0cbe8";
    case State::SlotWait: return "#f28e2b";
    case State::Proving: return "#c9a2d8";
    case State::WaitingOnSynthesis: return "#e15759";
    case State::PickupLatency: return "#edc948";
    case State::Starting: return "#76b7b2";
    case State::Down: return "#59595c";
    case State::KeyLoad: return "#b07aa1";
    case State::NoWork: return "#ededed";
  }
  return "#000000";
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A tick step of 1, 2 or 5 x 10^k ms giving at most ~10 ticks.
double tick_step(double span_ms) {
  double step = std::pow(10.0, std::floor(std::log10(std::max(span_ms, 1e-6) / 10)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (span_ms / (step * m) <= 10) return step * m;
  return step * 10;
}

class Svg {
 public:
  Svg(const Waterfall& w, std::ostream& out) : w_(w), out_(out), plot_w_(kWidth - kLeft - kRight) {}

  void render() {
    const double lanes_h = w_.lanes.size() * (kLaneH + kLaneGap);
    const double axis_y = kTop + lanes_h + 4;
    const double legend_y = axis_y + 40;
    const double height = legend_y + 3 * 22 + 16;
    out_ << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << fmt("%.0f", height)
         << "\" viewBox=\"0 0 " << kWidth << " " << fmt("%.0f", height)
         << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    out_ << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    title();
    for (size_t i = 0; i < w_.lanes.size(); i++) lane(w_.lanes[i], kTop + i * (kLaneH + kLaneGap));
    axis(axis_y);
    legend(legend_y);
    out_ << "</svg>\n";
  }

 private:
  double x(double ms) const { return kLeft + (w_.span_ms > 0 ? (ms - w_.start_ms) / w_.span_ms * plot_w_ : 0); }

  void rect(double x0, double y, double wd, double h, const char* fill, const std::string& tip) {
    out_ << "<rect x=\"" << fmt("%.2f", x0) << "\" y=\"" << fmt("%.1f", y) << "\" width=\"" << fmt("%.2f", wd)
         << "\" height=\"" << fmt("%.1f", h) << "\" fill=\"" << fill << "\"";
    if (tip.empty()) out_ << "/>\n";
    else out_ << "><title>" << esc(tip) << "</title></rect>\n";
  }

  void title() {
    double busy = 0, kernels = 0;
    bool reported = false;
    for (const auto& d : w_.devices) busy += d.util, kernels += d.kernel_util, reported |= d.kernel_reported;
    const double n = std::max<double>(1, w_.devices.size());
    std::string t = "cuzk waterfall: " + std::to_string(w_.proofs) + " proofs in " + fmt("%.3f", w_.span_ms / 1000) + " s";
    if (w_.proofs) t += ", " + fmt("%.3f", w_.sec_per_proof) + " s/proof";
    if (!w_.devices.empty()) {
      t += ", GPU busy " + fmt("%.1f", 100 * busy / n) + "%";
      if (reported) t += " (kernels " + fmt("%.1f", 100 * kernels / n) + "%)";
      if (w_.devices.size() > 1) t += " per device on average";
    }
    out_ << "<text x=\"" << kLeft << "\" y=\"28\" font-size=\"17\" font-weight=\"bold\">" << esc(t) << "</text>\n";
    std::string sub = "from +" + fmt("%.3f", w_.start_ms / 1000) + " s to +" + fmt("%.3f", w_.end_ms / 1000) +
                      " s of the log; GPU busy is wall time GPU_START\u2192GPU_END, kernels the device's busy time";
    out_ << "<text x=\"" << kLeft << "\" y=\"50\" fill=\"#555555\">" << esc(sub) << "</text>\n";
  }

  void lane(const Lane& l, double y) {
    const bool gpu = l.kind == tl::kKindGpu;
    std::string name = gpu ? (l.worker.empty() ? "device " + l.device : l.worker + " (device " + l.device + ")") : l.worker;
    std::string stat = "busy " + fmt("%.1f", w_.span_ms > 0 ? 100 * l.busy_ms() / w_.span_ms : 0) + "%";
    if (gpu && l.kernel_reported)
      stat += ", kernels " + fmt("%.1f", w_.span_ms > 0 ? 100 * l.kernel_ms / w_.span_ms : 0) + "%";
    out_ << "<g>\n";
    out_ << "<text x=\"" << kLeft - 8 << "\" y=\"" << fmt("%.1f", y + 13) << "\" text-anchor=\"end\" font-weight=\"bold\">"
         << esc(name) << "</text>\n";
    out_ << "<text x=\"" << kLeft - 8 << "\" y=\"" << fmt("%.1f", y + 26) << "\" text-anchor=\"end\" font-size=\"10\" "
         << "fill=\"#555555\">" << esc(stat) << "</text>\n";
    for (const auto& g : l.segments)
      rect(x(g.start_ms), y, x(g.end_ms) - x(g.start_ms), kLaneH, colour(g.state),
           std::string(state_label(g.state)) + ": " + fmt("%.3f", (g.end_ms - g.start_ms) / 1000) + " s");
    for (const auto& b : l.bars) {
      const double x0 = std::max(x(b.start_ms), kLeft), x1 = std::min(x(b.end_ms), kLeft + plot_w_);
      if (x1 <= x0) continue;
      const double wall = b.end_ms - b.start_ms;
      std::string tip = (gpu ? "proof" : "synthesis") + std::string(b.job.empty() ? "" : " job " + b.job) +
                        (b.partition.empty() ? "" : " p" + b.partition) + ": " + fmt("%.1f", wall) + " ms";
      if (!gpu) tip += " (witness " + fmt("%.1f", b.witness_ms) + " ms, eval " + fmt("%.1f", b.eval_ms) + " ms)";
      if (gpu && b.kernel_ms >= 0)
        tip += ", kernels busy " + fmt("%.1f", b.kernel_ms) + " ms (" +
               fmt("%.0f", wall > 0 ? 100 * b.kernel_ms / wall : 0) + "%)";
      if (!b.cut.empty()) tip += ", " + b.cut;
      if (gpu && b.kernel_ms >= 0 && wall > 0)
        rect(x0, y + kLaneH * 0.55, (x1 - x0) * std::min(1.0, b.kernel_ms / wall), kLaneH * 0.45, kKernelColour, "");
      // The bar's outline separates back-to-back tasks and carries the tooltip.
      out_ << "<rect x=\"" << fmt("%.2f", x0) << "\" y=\"" << fmt("%.1f", y) << "\" width=\"" << fmt("%.2f", x1 - x0)
           << "\" height=\"" << kLaneH << "\" fill=\"none\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" << esc(tip)
           << "</title></rect>\n";
    }
    out_ << "</g>\n";
  }

  void axis(double y) {
    out_ << "<line x1=\"" << kLeft << "\" y1=\"" << fmt("%.1f", y) << "\" x2=\"" << kLeft + plot_w_ << "\" y2=\""
         << fmt("%.1f", y) << "\" stroke=\"#333333\"/>\n";
    const double step = tick_step(w_.span_ms);
    const int decimals = step >= 1000 ? 0 : step >= 100 ? 1 : step >= 10 ? 2 : 3;
    for (double t = 0; t <= w_.span_ms + step * 1e-9; t += step) {
      const double xt = x(w_.start_ms + t);
      out_ << "<line x1=\"" << fmt("%.2f", xt) << "\" y1=\"" << fmt("%.1f", y) << "\" x2=\"" << fmt("%.2f", xt)
           << "\" y2=\"" << fmt("%.1f", y + 5) << "\" stroke=\"#333333\"/>\n";
      char b[64];
      std::snprintf(b, sizeof b, "%.*f s", decimals, t / 1000);
      out_ << "<text x=\"" << fmt("%.2f", xt) << "\" y=\"" << fmt("%.1f", y + 18) << "\" text-anchor=\"middle\">" << b
           << "</text>\n";
    }
  }

  void legend(double y) {
    struct Item {
      const char* fill;
      std::string text;
    };
    std::vector<Item> items;
    for (State s : {State::Witness, State::Eval, State::SynthOther, State::SlotWait, State::Proving})
      items.push_back({colour(s), state_label(s)});
    items.push_back({kKernelColour, "kernels busy (share of the proof)"});
    for (State s : {State::WaitingOnSynthesis, State::PickupLatency, State::Starting, State::KeyLoad, State::Down,
                    State::NoWork})
      items.push_back({colour(s), state_label(s)});
    const double col_w = 250;
    for (size_t i = 0; i < items.size(); i++) {
      const double lx = kLeft + (i % 4) * col_w, ly = y + (i / 4) * 22;
      out_ << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"14\" height=\"14\" fill=\"" << items[i].fill
           << "\" stroke=\"#999999\" stroke-width=\"0.5\"/>\n";
      out_ << "<text x=\"" << lx + 20 << "\" y=\"" << ly + 11 << "\">" << esc(items[i].text) << "</text>\n";
    }
  }

  const Waterfall& w_;
  std::ostream& out_;
  const double plot_w_;
};

}  // namespace

void render_svg(const Waterfall& w, std::ostream& out) { Svg(w, out).render(); }

}  // namespace cuzk::cli::timeline
