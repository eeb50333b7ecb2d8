import Foundation

/// Text made safe for HTML and SVG, element content and attribute values alike: `&`, `<`,
/// `>`, `"` and `'` become entities and control characters (a device name is whatever the
/// kernel driver or a USB descriptor says) become U+FFFD, which XML would refuse anyway.
/// Newlines and tabs become spaces unless `multiline` (text in a `<pre>`).
func htmlEscaped(_ s: String, multiline: Bool = false) -> String {
    var out = ""
    out.reserveCapacity(s.utf8.count)
    for u in s.unicodeScalars {
        switch u {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        case "\n", "\t": out.unicodeScalars.append(multiline ? u : " ")
        default:
            if u.value < 0x20 || (0x7f...0x9f).contains(u.value) {
                out.unicodeScalars.append("\u{FFFD}")
            } else {
                out.unicodeScalars.append(u)
            }
        }
    }
    return out
}

/// A number for an SVG attribute: at most two decimals, no exponent.
func svgNumber(_ v: Double) -> String {
    guard v.isFinite else { return "0" }
    let r = (v * 100).rounded() / 100
    return r == r.rounded() ? String(Int(r)) : String(format: "%.2f", r)
}

/// A tiny builder for inline SVG: shapes in plot coordinates, every text escaped. Elements
/// take their look from CSS classes (the page's style sheet), so a plot carries no colours
/// of its own and the palette and patterns are defined once.
struct SVG {
    /// The drawing's size in CSS pixels.
    let width: Double, height: Double
    /// What a screen reader says for the whole plot.
    let label: String
    private var body = ""

    /// An empty drawing.
    init(width: Double, height: Double, label: String) {
        self.width = width
        self.height = height
        self.label = label
    }

    private static func attributes(_ a: [(String, String)]) -> String {
        a.map { " \($0.0)=\"\(htmlEscaped($0.1))\"" }.joined()
    }

    /// A rectangle; `title` becomes its tooltip.
    mutating func rect(x: Double, y: Double, width: Double, height: Double, class cls: String, title: String? = nil,
                       data: [(String, String)] = []) {
        let a = [("x", svgNumber(x)), ("y", svgNumber(y)), ("width", svgNumber(max(0, width))),
                 ("height", svgNumber(max(0, height))), ("class", cls)] + data
        if let title {
            body += "<rect\(Self.attributes(a))><title>\(htmlEscaped(title))</title></rect>"
        } else {
            body += "<rect\(Self.attributes(a))/>"
        }
    }

    /// A straight line.
    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, class cls: String) {
        body += "<line\(Self.attributes([("x1", svgNumber(x1)), ("y1", svgNumber(y1)), ("x2", svgNumber(x2)), ("y2", svgNumber(y2)), ("class", cls)]))/>"
    }

    /// A polyline through `points`.
    mutating func polyline(_ points: [(Double, Double)], class cls: String) {
        let p = points.map { "\(svgNumber($0.0)),\(svgNumber($0.1))" }.joined(separator: " ")
        body += "<polyline\(Self.attributes([("points", p), ("class", cls)]))/>"
    }

    /// A path (`d` in SVG path syntax).
    mutating func path(_ d: String, class cls: String, title: String? = nil) {
        if let title {
            body += "<path\(Self.attributes([("d", d), ("class", cls)]))><title>\(htmlEscaped(title))</title></path>"
        } else {
            body += "<path\(Self.attributes([("d", d), ("class", cls)]))/>"
        }
    }

    /// A circle.
    mutating func circle(cx: Double, cy: Double, r: Double, class cls: String) {
        body += "<circle\(Self.attributes([("cx", svgNumber(cx)), ("cy", svgNumber(cy)), ("r", svgNumber(r)), ("class", cls)]))/>"
    }

    /// Text; `anchor` is `start`, `middle` or `end`.
    mutating func text(_ s: String, x: Double, y: Double, anchor: String = "start", class cls: String = "label",
                       rotate: Double? = nil) {
        var a = [("x", svgNumber(x)), ("y", svgNumber(y)), ("text-anchor", anchor), ("class", cls)]
        if let rotate { a.append(("transform", "rotate(\(svgNumber(rotate)) \(svgNumber(x)) \(svgNumber(y)))")) }
        body += "<text\(Self.attributes(a))>\(htmlEscaped(s))</text>"
    }

    /// The `<svg>` element.
    var markup: String {
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"\(htmlEscaped(label))\" "
            + "viewBox=\"0 0 \(svgNumber(width)) \(svgNumber(height))\" width=\"\(svgNumber(width))\" height=\"\(svgNumber(height))\">"
            + "<title>\(htmlEscaped(label))</title>" + body + "</svg>"
    }
}
