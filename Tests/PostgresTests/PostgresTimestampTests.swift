import Foundation
import Testing

@testable import Postgres

@Suite struct PostgresTimestampTests {
  @Test func parsesTimestamptzWithMicrosecondsAndUTCOffset() throws {
    let date = try #require(PostgresTimestamp.parse("2026-11-29 13:26:31.123456+00"))
    #expect(abs(date.timeIntervalSince1970 - 1795958791.123456) < 0.000_001)
  }

  @Test func appliesNonUTCOffsets() throws {
    let utc = try #require(PostgresTimestamp.parse("2026-11-29 13:26:31+00"))
    let india = try #require(PostgresTimestamp.parse("2026-11-29 18:56:31+05:30"))
    let odd = try #require(PostgresTimestamp.parse("2026-11-29 13:26:31-00:00:30"))
    #expect(utc == india)
    #expect(odd.timeIntervalSince(utc) == 30)
  }

  @Test func readsTimestampWithoutZoneAndDateAsUTC() throws {
    let plain = try #require(PostgresTimestamp.parse("1970-01-02 00:00:00.5"))
    let day = try #require(PostgresTimestamp.parse("1970-01-02"))
    #expect(plain.timeIntervalSince1970 == 86_400.5)
    #expect(day.timeIntervalSince1970 == 86_400)
  }

  @Test(arguments: [
    "", "infinity", "2026-13-01", "2026-11-29 25:00:00", "2026-11-29 13:26:31.",
    "0099-01-01 00:00:00 BC", "2026-11-29x",
  ])
  func rejectsWhatIsNotATimestamp(_ text: String) {
    #expect(PostgresTimestamp.parse(text) == nil)
  }

  @Test func formatsUTCWithMicroseconds() {
    #expect(
      PostgresTimestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
    #expect(
      PostgresTimestamp.format(Date(timeIntervalSince1970: 1795958791.123456))
        == "2026-11-29T13:26:31.123456Z")
    #expect(
      PostgresTimestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500000Z")
    #expect(
      PostgresTimestamp.format(Date(timeIntervalSince1970: 951_782_400))
        == "2000-02-29T00:00:00.000000Z")
  }

  @Test func formatThenParseRoundTrips() throws {
    for seconds in stride(from: -2_000_000_000.0, to: 4_000_000_000.0, by: 86_399.987_654) {
      let date = Date(timeIntervalSince1970: seconds)
      let parsed = try #require(PostgresTimestamp.parse(PostgresTimestamp.format(date)))
      #expect(abs(parsed.timeIntervalSince(date)) < 0.000_001)
    }
  }
}
