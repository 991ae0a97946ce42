import HTTP
import Testing

@testable import StorekeeperAPI

/// The export route's query is judged before any SQL: only instants PostgreSQL reads the same
/// way reach it, and the range is bounded.
@Suite struct ExportParametersTests {
  @Test(arguments: [
    ("2026-03-01", 1_772_323_200),
    ("2026-03-01T00:00:00Z", 1_772_323_200),
    ("2026-03-01T02:30:00+02:30", 1_772_323_200),
    ("2026-02-28T23:00:00-01:00", 1_772_323_200),
    ("2026-03-01T00:00:00.123456Z", 1_772_323_200),
  ])
  func readsDatesAndRFC3339Instants(_ text: String, _ seconds: Int) {
    #expect(ExportParameters.instant(text) == seconds)
  }

  @Test(arguments: [
    "2026-3-01", "2026-02-30", "1999-12-31", "2026-03-01T00:00:00", "2026-03-01 00:00:00Z",
    "2026-03-01T24:00:00Z", "2026-03-01T00:00:00.Z", "2026-03-01T00:00:00+0100",
    "2026-03-01T00:00:00Zjunk", "now", "2026-03-01T00:00:00.1234567890Z",
  ])
  func refusesEverythingElse(_ text: String) {
    #expect(ExportParameters.instant(text) == nil)
  }

  /// PostgreSQL is handed UTC only: it refuses zone offsets past 15:59, which RFC 3339 allows
  /// (up to 23:59), and once refused mid-answer the export could only be cut off.
  @Test(arguments: [
    ("2026-03-01", "2026-03-01T00:00:00Z"),
    ("2026-03-01T02:30:00+02:30", "2026-03-01T00:00:00Z"),
    ("2026-02-28T04:00:00-20:00", "2026-03-01T00:00:00Z"),
    ("2000-01-01T00:00:00+23:59", "1999-12-31T00:01:00Z"),
    ("2026-12-31T23:59:59.000001-00:01", "2027-01-01T00:00:59.000001Z"),
    ("2024-02-29T12:00:00.5Z", "2024-02-29T12:00:00.5Z"),
  ])
  func writesTheInstantInUTC(_ text: String, _ utc: String) {
    #expect(ExportParameters.utc(text) == utc)
  }

  @Test func theQueryKeepsTheTextAsAskedAndHandsOnUTC() throws {
    let parsed = try ExportParameters.parse([
      "from": "2026-02-28T04:00:00-20:00", "to": "2026-03-02T00:00:00.25+15:59",
    ])
    #expect(parsed.from == "2026-02-28T04:00:00-20:00" && parsed.fromUTC == "2026-03-01T00:00:00Z")
    #expect(parsed.toUTC == "2026-03-01T08:01:00.25Z")
  }

  @Test func namesEveryWrongField() {
    do {
      _ = try ExportParameters.parse([
        "from": "2026-02-01", "to": "2026-01-01", "format": "xml", "x": "1",
      ])
      Issue.record("accepted")
    } catch let error as HTTPError {
      #expect(error.status == 422 && error.code == "invalid_export_query")
      #expect(Set(error.fields.map(\.field)) == ["from", "format", "x"])
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test func boundsTheRange() throws {
    #expect(throws: HTTPError.self) {
      try ExportParameters.parse(["from": "2020-01-01", "to": "2023-01-03"])
    }
    let ok = try ExportParameters.parse(["from": "2020-01-01", "to": "2023-01-01"])
    #expect(ok.format == .csv && ok.from == "2020-01-01")
  }
}
