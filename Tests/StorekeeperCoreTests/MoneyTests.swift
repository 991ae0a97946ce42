import Testing

@testable import StorekeeperCore

@Suite struct MoneyTests {
  @Test func parsesAndNormalisesToTheCurrencyExponent() throws {
    #expect(try Money.minorUnits("6", exponent: 2) == 600)
    #expect(try Money.minorUnits("6.5", exponent: 2) == 650)
    #expect(try Money.minorUnits("6.05", exponent: 2) == 605)
    #expect(try Money.minorUnits("0", exponent: 0) == 0)
    #expect(try Money.minorUnits("1.234", exponent: 3) == 1234)
    #expect(Money.format(minorUnits: 605, exponent: 2) == "6.05")
    #expect(Money.format(minorUnits: 600, exponent: 0) == "600")
    #expect(Money.format(minorUnits: 5, exponent: 3) == "0.005")
  }

  @Test func rejectsWhatIsNotAPlainNonNegativeDecimal() {
    for text in ["", "-1", "1e3", "1.", ".5", "1,00", " 1", "0x10", "1.2.3", "١٢"] {
      #expect(throws: Money.Problem.notADecimal) { try Money.minorUnits(text, exponent: 2) }
    }
  }

  @Test func rejectsMoreFractionDigitsThanTheCurrencyHas() {
    #expect(throws: Money.Problem.tooManyFractionDigits(allowed: 2)) {
      try Money.minorUnits("6.001", exponent: 2)
    }
    #expect(throws: Money.Problem.tooManyFractionDigits(allowed: 0)) {
      try Money.minorUnits("600.5", exponent: 0)
    }
  }

  @Test func rejectsAmountsThatCouldOverflow() {
    #expect(throws: Money.Problem.tooLarge) { try Money.minorUnits("1234567890123", exponent: 2) }
    #expect(throws: Never.self) { try Money.minorUnits("000000000000000006.00", exponent: 2) }
  }

  @Test func padsASumToItsCurrencysDigitsAndKeepsMore() {
    #expect(Money.padded("6", exponent: 2) == "6.00")
    #expect(Money.padded("6.5", exponent: 2) == "6.50")
    #expect(Money.padded("0.125", exponent: 2) == "0.125")
    #expect(Money.padded("120", exponent: 0) == "120")
    #expect(Money.padded("19999999999999.8", exponent: 2) == "19999999999999.80")
  }

  @Test func knowsCurrencyExponents() {
    #expect(Currency.exponent(of: "JPY") == 0)
    #expect(Currency.exponent(of: "USD") == 2)
    #expect(Currency.exponent(of: "CNY") == 2)
    #expect(Currency.exponent(of: "KWD") == 3)
    #expect(Currency.exponent(of: "usd") == nil)
    #expect(Currency.exponent(of: "XXX") == nil)
  }
}
