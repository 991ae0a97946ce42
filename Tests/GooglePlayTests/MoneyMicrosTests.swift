import Foundation
import GooglePlay
import Testing

/// `google.type.Money` as Google's JSON writes it: proto3 leaves out fields whose value is zero.
@Suite struct MoneyMicrosTests {
  private func money(_ json: String) throws -> Money {
    try JSONDecoder().decode(Money.self, from: Data(json.utf8))
  }

  @Test func aPriceUnderOneUnitHasNoUnitsField() throws {
    #expect(try money(#"{"currencyCode":"USD","nanos":990000000}"#).micros == 990_000)
    #expect(try money(#"{"currencyCode":"KWD","nanos":250000000}"#).micros == 250_000)
  }

  @Test func aFreePeriodIsACurrencyAlone() throws {
    #expect(try money(#"{"currencyCode":"EUR"}"#).micros == 0)
  }

  @Test func aWholePriceHasNoNanosField() throws {
    #expect(try money(#"{"currencyCode":"JPY","units":"480"}"#).micros == 480_000_000)
    #expect(try money(#"{"currencyCode":"USD","units":"4","nanos":990000000}"#).micros == 4_990_000)
  }

  @Test func noCurrencyANegativeOrAnOverflowingAmountIsNoPrice() throws {
    #expect(try money(#"{"units":"4"}"#).micros == nil)
    #expect(try money(#"{"currencyCode":"","units":"4"}"#).micros == nil)
    #expect(try money(#"{"currencyCode":"USD","units":"-1"}"#).micros == nil)
    #expect(try money(#"{"currencyCode":"USD","units":"9223372036854775807"}"#).micros == nil)
  }
}
