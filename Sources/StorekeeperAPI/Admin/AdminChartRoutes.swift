import HTTP
import StorekeeperCore
import StorekeeperLogging

/// `GET /admin/v1/charts/{name}` and `…/{name}/transactions` (read scope): the charts of
/// docs/CHARTS.md computed from the stores' transactions, and the transactions behind any
/// point. Each is one statement on the read pool, over a range `ChartParameters` bounds.
package struct AdminChartRoutes: Sendable {
  let auth: AdminAuthenticator
  let charts: ChartRepository

  package init(auth: AdminAuthenticator, charts: ChartRepository) {
    self.auth = auth
    self.charts = charts
  }

  /// The answer's head; its `rows` are spliced in as PostgreSQL wrote them.
  struct Head: Encodable {
    var chart: String
    var from: String
    var to: String
    var resolution: String
    var tz: String
    var segment: String
    var filters: [String: String?]
    /// The reporting currency asked for (`?currency=`), and the currencies no rate converted.
    var currency: String?
    var unconverted: [String]?
    /// `rollup` or `transactions`, and the instant the rows are exact up to with how far
    /// behind now that is (0 for the transactions; the rollup's lag otherwise).
    var source: String
    var asOf: String?
    var lagSeconds: Int64?
    /// The zone `payers` and `cohorts` are counted ahead in (`CHARTS_TIME_ZONE`): asked in it,
    /// they answer from the counts.
    var countsZone: String?

    enum CodingKeys: String, CodingKey {
      case chart, from, to, resolution, tz, segment, filters, source, currency, unconverted
      case asOf = "as_of"
      case lagSeconds = "lag_seconds"
      case countsZone = "counts_zone"
    }
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/charts/{name}") { request, context in
      _ = try auth.authenticate(request, context)
      let name = try Self.name(context)
      var rest = request.query
      let source = rest.removeValue(forKey: "source") ?? "auto"
      guard ["auto", "transactions"].contains(source) else {
        try ChartParameters.check([
          FieldError(field: "source", message: "must be auto or transactions")
        ])
        throw HTTPError(422, code: "invalid_chart_query")
      }
      let query = try await parse(name, rest)
      let (rows, count, from) = try await charts.rows(query, raw: source == "transactions")
      if count > ChartQuery.maxRows { throw Self.tooLarge(query, rows: count) }
      var head = Self.head(query)
      head.source = from.rollup ? "rollup" : "transactions"
      head.asOf = from.asOf
      head.lagSeconds = from.lagSeconds
      head.unconverted = from.unconverted
      head.countsZone = from.countsZone
      var body = try JSONCoding.encode(head)
      // `{…}` becomes `{…,"rows":[…]}`: the rows are JSON PostgreSQL built, never re-parsed.
      body.removeLast()
      body.append(contentsOf: Array(",\"rows\":".utf8))
      body.append(contentsOf: Array(rows.utf8))
      body.append(UInt8(ascii: "}"))
      return Response(status: 200, headers: ["Content-Type": "application/json"], body: body)
    }
    router.add(.get, "/admin/v1/charts/{name}/transactions") { request, context in
      _ = try auth.authenticate(request, context)
      let name = try Self.name(context)
      var problems: [FieldError] = []
      let period = request.query["period"].flatMap(ChartParameters.day)
      if period == nil {
        problems.append(
          FieldError(field: "period", message: "must be a point's period, a date YYYY-MM-DD"))
      }
      let month = Self.cohortMonth(name, request.query["month"], problems: &problems)
      let pointCurrency = request.query["point_currency"]
      if let pointCurrency,
        pointCurrency.utf8.count != 3 || !pointCurrency.utf8.allSatisfy({ (65...90).contains($0) })
      {
        problems.append(
          FieldError(field: "point_currency", message: "must be a row's currency (ISO 4217)"))
      }
      let page = PageRequest(
        request.query.filter { ["limit", "cursor"].contains($0.key) }, known: [],
        problems: &problems, cursorRule: "must be a next_cursor (1-64 printable characters)",
        isKey: AdminUserRoutes.isTransactionId)
      var rest = request.query
      rest["limit"] = nil
      rest["cursor"] = nil
      let parsed = ChartParameters.parse(
        name: name, rest, extra: ["period", "month", "point_currency"],
        today: ChartParameters.today(),
        problems: &problems)
      try ChartParameters.check(problems)
      guard let parsed, let period else { throw HTTPError(422, code: "invalid_chart_query") }
      let query = try await checkedZone(parsed)
      let split = try await charts.transactions(
        query, period: ChartParameters.text(day: period), month: month,
        pointCurrency: pointCurrency, after: page.after, limit: page.limit)
      return try JSONCoding.response(ListPage("transactions", split.items, next: split.next))
    }
  }

  /// A cohort point's month (`month` of its row: 0 is the cohort's own, at most 1200), asked
  /// for its payments; no other chart has one.
  static func cohortMonth(_ name: ChartName, _ text: String?, problems: inout [FieldError])
    -> Int?
  {
    guard let text else { return nil }
    guard name == .cohorts else {
      problems.append(FieldError(field: "month", message: "only cohorts have months"))
      return nil
    }
    guard text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      let month = Int(text), month <= 1200
    else {
      problems.append(FieldError(field: "month", message: "must be a whole number from 0 to 1200"))
      return nil
    }
    return month
  }

  func parse(_ name: ChartName, _ query: [String: String]) async throws -> ChartQuery {
    var problems: [FieldError] = []
    let parsed = ChartParameters.parse(
      name: name, query, today: ChartParameters.today(), problems: &problems)
    try ChartParameters.check(problems)
    guard let parsed else { throw HTTPError(422, code: "invalid_chart_query") }
    return try await checkedZone(parsed)
  }

  /// The zone must be one PostgreSQL knows, asked of PostgreSQL, which computes the chart.
  func checkedZone(_ query: ChartQuery) async throws -> ChartQuery {
    if query.timeZone != "UTC", !(try await charts.knowsTimeZone(query.timeZone)) {
      try ChartParameters.check([
        FieldError(field: "tz", message: "is not a time zone PostgreSQL knows")
      ])
    }
    return query
  }

  static func head(_ query: ChartQuery) -> Head {
    Head(
      chart: query.name.rawValue, from: query.from, to: query.to,
      resolution: query.resolution.rawValue, tz: query.timeZone, segment: query.segment.rawValue,
      filters: [
        "store": query.store, "product": query.product, "country": query.country,
        "environment": query.environment ?? "all",
      ], currency: query.currency, source: "transactions")
  }

  /// An answer over `ChartQuery.maxRows` rows: 422 naming the parameter that multiplies them
  /// most (the segment, else the resolution, else the range) and the limit.
  static func tooLarge(_ query: ChartQuery, rows: Int64) -> HTTPError {
    let field =
      query.segment != .none ? "segment" : query.resolution != .month ? "resolution" : "from"
    var problem = HTTPError(
      422, code: "chart_too_large",
      detail: "the answer would have \(rows) rows, over the limit of \(ChartQuery.maxRows)",
      fields: [
        FieldError(
          field: field,
          message: "makes \(rows) rows, over \(ChartQuery.maxRows): ask for fewer segments "
            + "(a filter), a coarser resolution or a shorter range")
      ])
    problem.members = [("limit", String(ChartQuery.maxRows)), ("rows", String(rows))]
    return problem
  }

  /// An unknown chart is 404, before any query.
  static func name(_ context: Context) throws -> ChartName {
    guard let name = context.parameters["name"].flatMap(ChartName.init(rawValue:)) else {
      throw HTTPError(
        404, code: "chart_not_found",
        detail: "no such chart; see docs/CHARTS.md for the names")
    }
    return name
  }
}
