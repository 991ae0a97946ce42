import Foundation
import HTTP
import StorekeeperCore
import Testing

@testable import StorekeeperAPI

/// A chart's query is checked before any SQL runs: dates are real calendar days, the range is
/// bounded, and every wrong parameter is named at once.
@Suite struct ChartParametersTests {
  /// Days from 1970 as Foundation's Gregorian calendar counts them, the independent reading.
  static func foundationDay(_ text: String, _ formatter: DateFormatter) -> Int? {
    guard let date = formatter.date(from: text), formatter.string(from: date) == text else {
      return nil
    }
    return Int(date.timeIntervalSince1970 / 86_400)
  }

  static func formatter() -> DateFormatter {
    let formatter = DateFormatter()
    formatter.calendar = Calendar(identifier: .gregorian)
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.dateFormat = "yyyy-MM-dd"
    formatter.isLenient = false
    return formatter
  }

  @Test func everyDayOfTheCenturyRoundTripsAsFoundationCountsIt() {
    let formatter = Self.formatter()
    var day = ChartParameters.day("2000-01-01") ?? 0
    let last = ChartParameters.day("2099-12-31") ?? 0
    #expect(day == 10_957 && last > day)
    while day <= last {
      let text = ChartParameters.text(day: day)
      #expect(ChartParameters.day(text) == day)
      #expect(Self.foundationDay(text, formatter) == day, "\(text)")
      day += 1
    }
  }

  @Test func daysThatDoNotExistOrFallOutsideTheCenturyAreRefused() {
    for text in [
      "2026-02-29", "2100-02-29", "2026-13-01", "2026-04-31", "2026-00-10", "1999-12-31",
      "2100-01-01", "2026-1-01", "２０２６-01-01", "2026-01-01T00:00:00Z", "",
    ] {
      #expect(ChartParameters.day(text) == nil, "\(text)")
    }
    #expect(ChartParameters.day("2024-02-29") != nil)
  }

  @Test func everyWrongParameterIsNamedAtOnce() {
    var problems: [FieldError] = []
    let query = ChartParameters.parse(
      name: .cohorts,
      [
        "from": "2026-02-30", "to": "x", "resolution": "day", "tz": "a b", "segment": "user",
        "store": "steam", "product": "", "country": "usa", "environment": "prod", "colour": "red",
      ], today: ChartParameters.day("2026-06-01") ?? 0, problems: &problems)
    #expect(query == nil)
    #expect(
      Set(problems.map(\.field)) == [
        "from", "to", "resolution", "tz", "segment", "store", "product", "country", "environment",
        "colour",
      ])
  }

  @Test func aRangeIsAtMostThreeYearsOfDaysAndDefaultsToTheLastThirty() {
    let today = ChartParameters.day("2026-06-01") ?? 0
    var problems: [FieldError] = []
    let defaults = ChartParameters.parse(name: .revenue, [:], today: today, problems: &problems)
    #expect(defaults?.from == "2026-05-03" && defaults?.to == "2026-06-01")
    #expect(defaults?.environment == "Production" && defaults?.timeZone == "UTC")
    let widest = ChartParameters.parse(
      name: .revenue, ["from": "2023-06-02", "to": "2026-06-01"], today: today,
      problems: &problems)
    #expect(widest != nil && problems.isEmpty)
    _ = ChartParameters.parse(
      name: .revenue, ["from": "2023-06-01", "to": "2026-06-01"], today: today,
      problems: &problems)
    #expect(problems.map(\.field) == ["from"])
  }
}
