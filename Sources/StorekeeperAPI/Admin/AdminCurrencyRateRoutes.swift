import HTTP
import StorekeeperCore
import StorekeeperLogging

/// `/admin/v1/currency-rates[/{reporting}/{currency}/{valid_from}]`: the rates the money charts
/// convert with (`?currency=`, docs/CHARTS.md). Listing needs the read scope, writing and
/// removing the write scope (the method decides, as for every admin route).
package struct AdminCurrencyRateRoutes: Sendable {
  let auth: AdminAuthenticator
  let rates: CurrencyRates

  package init(auth: AdminAuthenticator, rates: CurrencyRates) {
    self.auth = auth
    self.rates = rates
  }

  struct Listing: Encodable {
    var rates: [CurrencyRate]
  }

  /// At most twelve digits either side of the point: rates between currencies span about
  /// 10⁻⁶ (a unit of VND in KWD) to 10⁶, with room to spare.
  static func isRate(_ text: String) -> Bool {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), parts.allSatisfy({ (1...12).contains($0.count) }),
      parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
    else { return false }
    return text.utf8.contains { $0 >= 49 && $0 <= 57 }
  }

  static func isCurrency(_ text: String) -> Bool { Currency.exponent(of: text) != nil }

  /// The path's pair and day, or the problems with them.
  static func key(_ context: Context, _ problems: inout [FieldError])
    -> (reporting: String, currency: String, validFrom: String)
  {
    let reporting = context.parameters["reporting"] ?? ""
    let currency = context.parameters["currency"] ?? ""
    let day = context.parameters["valid_from"] ?? ""
    if !isCurrency(reporting) {
      problems.append(
        FieldError(field: "reporting", message: "must be an ISO 4217 code such as USD"))
    }
    if !isCurrency(currency) {
      problems.append(
        FieldError(field: "currency", message: "must be an ISO 4217 code such as EUR"))
    } else if currency == reporting {
      problems.append(
        FieldError(field: "currency", message: "must differ from the reporting currency"))
    }
    if ChartParameters.day(day) == nil {
      problems.append(
        FieldError(field: "valid_from", message: "must be a date YYYY-MM-DD from 2000 to 2099"))
    }
    return (reporting, currency, day)
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/currency-rates") { request, context in
      _ = try auth.authenticate(request, context)
      var problems: [FieldError] = []
      for key in request.query.keys.sorted() where key != "reporting_currency" {
        problems.append(FieldError(field: key, message: "is not a known parameter"))
      }
      let reporting = request.query["reporting_currency"]
      if let reporting, !Self.isCurrency(reporting) {
        problems.append(
          FieldError(field: "reporting_currency", message: "must be an ISO 4217 code such as USD"))
      }
      guard problems.isEmpty else {
        throw HTTPError(
          422, code: "validation_failed", detail: "one or more parameters are invalid",
          fields: problems)
      }
      return try JSONCoding.response(Listing(rates: try await rates.list(reporting: reporting)))
    }
    router.add(.put, "/admin/v1/currency-rates/{reporting}/{currency}/{valid_from}") {
      request, context in
      let admin = try auth.authenticate(request, context)
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["rate"])
      var problems: [FieldError] = []
      let key = Self.key(context, &problems)
      for problem in problems { fields.fail(problem.field, problem.message) }
      let given = fields.string("rate", required: true, maxLength: 25)
      let rate = given ?? ""
      if given != nil, !Self.isRate(rate) {
        fields.fail(
          "rate",
          "must be a positive decimal string such as \"1.0842\" (at most 12 digits either side)")
      }
      try fields.validate()
      guard
        let written = try await rates.put(
          reporting: key.reporting, currency: key.currency, validFrom: key.validFrom, rate: rate,
          by: admin)
      else {
        throw HTTPError(
          409, code: "currency_rates_full",
          detail: "the rate table holds at most \(CurrencyRates.maxRates) rates; remove some first")
      }
      context.logger.notice(
        "currency rate written",
        [
          "reporting_currency": .string(key.reporting), "currency": .string(key.currency),
          "valid_from": .string(key.validFrom), "rate": .string(rate),
          "admin": .string(admin.name),
        ])
      return try JSONCoding.response(written.rate, status: written.created ? 201 : 200)
    }
    router.add(.delete, "/admin/v1/currency-rates/{reporting}/{currency}/{valid_from}") {
      request, context in
      let admin = try auth.authenticate(request, context)
      var problems: [FieldError] = []
      let key = Self.key(context, &problems)
      guard problems.isEmpty,
        try await rates.delete(
          reporting: key.reporting, currency: key.currency, validFrom: key.validFrom, by: admin)
      else {
        throw HTTPError(404, code: "currency_rate_not_found", detail: "no such rate")
      }
      context.logger.notice(
        "currency rate removed",
        [
          "reporting_currency": .string(key.reporting), "currency": .string(key.currency),
          "valid_from": .string(key.validFrom), "admin": .string(admin.name),
        ])
      return Response(status: 204)
    }
  }
}
