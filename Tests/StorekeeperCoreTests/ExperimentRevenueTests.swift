import Testing

@testable import StorekeeperCore

/// Revenue per exposed user from the sums results read: store prices are exact to a thousandth
/// (App Store milliunits) or a millionth (Google Play micros), more digits than the answer's 4.
@Suite struct ExperimentRevenueTests {
  @Test func revenuePerUserKeepsFourDecimalsRoundedHalfUp() {
    #expect(ExperimentRepository.perUser("10", 3) == "3.3333")
    #expect(ExperimentRepository.perUser("0.99", 2) == "0.4950")
    #expect(ExperimentRepository.perUser("2", 3) == "0.6667")
  }

  @Test func aGooglePlayPriceInMicrosIsDividedNotDropped() {
    #expect(ExperimentRepository.perUser("1.000001", 1) == "1.0000")
    #expect(ExperimentRepository.perUser("1.00005", 1) == "1.0001")
    #expect(ExperimentRepository.perUser("12.345678", 2) == "6.1728")
  }

  @Test func nothingToDivideIsZero() {
    #expect(ExperimentRepository.perUser("5", 0) == "0")
    #expect(ExperimentRepository.perUser("not money", 2) == "0")
  }
}
