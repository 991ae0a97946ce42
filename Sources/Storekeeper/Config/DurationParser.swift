/// Durations in configuration: `500ms`, `90s`, `15m`, `24h`, `3d`, or plain seconds.
enum DurationParser {
  static func milliseconds(_ text: String) -> Int64? {
    let units: [(String, Int64)] = [
      ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000),
    ]
    for (suffix, factor) in units where text.hasSuffix(suffix) {
      let number = text.dropLast(suffix.count)
      // "ms" must not be read as "m" + "s": only accept pure digits before the suffix.
      guard let value = Int64(number), value >= 0, value <= Int64.max / factor else { continue }
      return value * factor
    }
    if let seconds = Int64(text), seconds >= 0, seconds <= Int64.max / 1000 {
      return seconds * 1000
    }
    return nil
  }
}
