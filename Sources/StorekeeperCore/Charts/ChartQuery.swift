/// One chart request, already checked at the edge: whole days from `from` to `to` (both
/// included) in the zone `timeZone`, cut into periods of `resolution`, over the transactions
/// the filters keep (nil keeps every value), split by `segment`.
package struct ChartQuery: Sendable, Equatable {
  package var name: ChartName
  /// `YYYY-MM-DD`, a calendar day in `timeZone`.
  package var from: String
  package var to: String
  package var resolution: ChartResolution
  /// An IANA zone PostgreSQL knows (`UTC` unless asked).
  package var timeZone: String
  package var segment: ChartSegment
  package var store: String?
  package var product: String?
  package var country: String?
  /// `Production` unless asked; nil is every environment.
  package var environment: String?
  /// The reporting currency money is converted into (`CurrencyRates`), or nil: as signed.
  package var currency: String? = nil

  /// The longest range a chart covers: three years of days is 1,096 points at most.
  package static let maxDays = 1096
  /// The most rows one answer holds (periods × segments × currencies, or cohort months):
  /// three years of days for 22 keys, about 5 MB of JSON.
  package static let maxRows = 25_000

  package init(
    name: ChartName, from: String, to: String, resolution: ChartResolution,
    timeZone: String = "UTC", segment: ChartSegment = .none, store: String? = nil,
    product: String? = nil, country: String? = nil, environment: String? = "Production"
  ) {
    self.name = name
    self.from = from
    self.to = to
    self.resolution = resolution
    self.timeZone = timeZone
    self.segment = segment
    self.store = store
    self.product = product
    self.country = country
    self.environment = environment
  }
}
