import Foundation

/// verifyReceipt spells every date three ways: milliseconds, GMT and Cupertino time, all as
/// strings ("1700000000000", "2023-11-14 22:13:20 Etc/GMT",
/// "2023-11-14 14:13:20 America/Los_Angeles").
struct FakeAppleDate: Sendable {
  var milliseconds: String
  var gmt: String
  var pacific: String

  init(milliseconds value: Int64) {
    let date = Date(timeIntervalSince1970: Double(value) / 1000)
    milliseconds = String(value)
    gmt = Self.format(date, zone: "GMT") + " Etc/GMT"
    pacific = Self.format(date, zone: "America/Los_Angeles") + " America/Los_Angeles"
  }

  private static func format(_ date: Date, zone: String) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone =
      TimeZone(identifier: zone) ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
    let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
    func two(_ value: Int?) -> String {
      let text = String(value ?? 0)
      return text.count < 2 ? "0" + text : text
    }
    return "\(parts.year ?? 1970)-\(two(parts.month))-\(two(parts.day)) "
      + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))"
  }
}
