import Foundation
import HTTP
import StorekeeperCore

/// The query of a chart request, checked before any SQL runs: every wrong parameter is named
/// in one 422 `invalid_chart_query`, and a range is bounded (`ChartQuery.maxDays`), so a
/// hostile caller can ask for at most three years of days, of one chart, per request.
struct ChartParameters {
  static let known: Set<String> = [
    "from", "to", "resolution", "tz", "segment", "store", "product", "country", "environment",
    "currency",
  ]
  static let stores: Set<String> = ["app_store", "google_play"]

  /// The calendar day `text` names (`YYYY-MM-DD`, 2000-01-01 to 2099-12-31), as days since
  /// 1970 (Gregorian, proleptic), or nil.
  static func day(_ text: String) -> Int? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2,
      parts[2].count == 2, let year = Int(parts[0]), let month = Int(parts[1]),
      let day = Int(parts[2]), (2000...2099).contains(year), (1...12).contains(month),
      parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
    else { return nil }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    guard (1...lengths[month - 1]).contains(day) else { return nil }
    // Days from civil (Howard Hinnant's algorithm).
    let y = month <= 2 ? year - 1 : year
    let era = y / 400
    let yoe = y - era * 400
    let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146097 + doe - 719468
  }

  /// `YYYY-MM-DD` of a day counted from 1970.
  static func text(day: Int) -> String {
    let z = day + 719468
    let era = z / 146097
    let doe = z - era * 146097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
    func pad(_ n: Int, _ width: Int) -> String {
      String(repeating: "0", count: max(0, width - String(n).count)) + String(n)
    }
    return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))"
  }

  static func isZoneName(_ text: String) -> Bool {
    (1...64).contains(text.utf8.count)
      && text.utf8.allSatisfy {
        ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57)
          || $0 == 47 || $0 == 95 || $0 == 43 || $0 == 45
      }
  }

  static func isProductId(_ text: String) -> Bool {
    (1...150).contains(text.utf8.count)
      && text.utf8.allSatisfy {
        ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57)
          || $0 == 46 || $0 == 95 || $0 == 45
      }
  }

  static func isCountry(_ text: String) -> Bool {
    text == "unknown"
      || ((2...3).contains(text.utf8.count)
        && text.utf8.allSatisfy { ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57) })
  }

  /// The chart query `query` asks for, or the problems with it. `extra` names the parameters
  /// the route reads itself (a point's `period`, paging).
  static func parse(
    name: ChartName, _ query: [String: String], extra: Set<String> = [], today: Int,
    problems: inout [FieldError]
  ) -> ChartQuery? {
    for key in query.keys.sorted() where !known.contains(key) && !extra.contains(key) {
      problems.append(FieldError(field: key, message: "is not a known parameter"))
    }
    var resolution = name == .cohorts ? ChartResolution.month : .day
    if let text = query["resolution"] {
      if let value = ChartResolution(rawValue: text) {
        resolution = value
      } else {
        problems.append(FieldError(field: "resolution", message: "must be day, week or month"))
      }
    }
    if name == .cohorts, resolution != .month {
      problems.append(
        FieldError(field: "resolution", message: "cohorts are by month: must be month"))
    }
    var to = today
    if let text = query["to"] {
      if let value = day(text) {
        to = value
      } else {
        problems.append(
          FieldError(field: "to", message: "must be a date YYYY-MM-DD from 2000 to 2099"))
      }
    }
    var from = to - 29
    if let text = query["from"] {
      if let value = day(text) {
        from = value
      } else {
        problems.append(
          FieldError(field: "from", message: "must be a date YYYY-MM-DD from 2000 to 2099"))
      }
    }
    if from > to {
      problems.append(FieldError(field: "from", message: "must not be after to"))
    } else if to - from + 1 > ChartQuery.maxDays {
      problems.append(
        FieldError(field: "from", message: "the range must be at most \(ChartQuery.maxDays) days"))
    }
    var timeZone = "UTC"
    if let text = query["tz"] {
      if isZoneName(text) {
        timeZone = text
      } else {
        problems.append(FieldError(field: "tz", message: "must be an IANA time zone name"))
      }
    }
    var segment = ChartSegment.none
    if let text = query["segment"] {
      if let value = ChartSegment(rawValue: text) {
        segment = value
      } else {
        problems.append(
          FieldError(
            field: "segment", message: "must be none, store, product, country or environment"))
      }
    }
    let store = query["store"]
    if let store, !stores.contains(store) {
      problems.append(FieldError(field: "store", message: "must be app_store or google_play"))
    }
    let product = query["product"]
    if let product, !isProductId(product) {
      problems.append(
        FieldError(field: "product", message: "must be 1-150 letters, digits, '.', '_' or '-'"))
    }
    let country = query["country"]
    if let country, !isCountry(country) {
      problems.append(
        FieldError(
          field: "country", message: "must be a storefront code (2-3 capitals) or unknown"))
    }
    var environment: String? = "Production"
    if let text = query["environment"] {
      switch text {
      case "Production", "Sandbox": environment = text
      case "all": environment = nil
      default:
        problems.append(
          FieldError(field: "environment", message: "must be Production, Sandbox or all"))
      }
    }
    let currency = query["currency"]
    if let currency {
      if Currency.exponent(of: currency) == nil {
        problems.append(
          FieldError(field: "currency", message: "must be an ISO 4217 code such as USD"))
      } else if !name.isMoney {
        problems.append(
          FieldError(
            field: "currency",
            message: "converts money: revenue, payers, refund_rate, mrr, arr and cohorts only"))
      }
    }
    guard problems.isEmpty else { return nil }
    var parsed = ChartQuery(
      name: name, from: text(day: from), to: text(day: to), resolution: resolution,
      timeZone: timeZone, segment: segment, store: store, product: product, country: country,
      environment: environment)
    parsed.currency = currency
    return parsed
  }

  /// Throws the 422 naming every problem.
  static func check(_ problems: [FieldError]) throws {
    guard problems.isEmpty else {
      throw HTTPError(
        422, code: "invalid_chart_query", detail: "one or more query parameters are invalid",
        fields: problems)
    }
  }

  /// Today as days since 1970, in UTC.
  static func today() -> Int {
    Int((Date().timeIntervalSince1970 / 86_400).rounded(.down))
  }
}
