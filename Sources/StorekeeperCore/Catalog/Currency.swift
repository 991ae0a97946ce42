/// ISO 4217 currencies with their minor-unit exponent: how many fraction digits a price may
/// have (JPY 0, USD 2, KWD 3).
package enum Currency {
  package static func exponent(of code: String) -> Int? { exponents[code] }

  private static let exponents: [String: Int] = {
    var table: [String: Int] = [:]
    for code in twoDigit.split(separator: " ") { table[String(code)] = 2 }
    for code in zeroDigit.split(separator: " ") { table[String(code)] = 0 }
    for code in threeDigit.split(separator: " ") { table[String(code)] = 3 }
    table["CLF"] = 4
    table["UYW"] = 4
    return table
  }()

  private static let zeroDigit =
    "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
  private static let threeDigit = "BHD IQD JOD KWD LYD OMR TND"
  private static let twoDigit = """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN \
    BZD CAD CDF CHE CHF CHW CNY COP COU CRC CUC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP \
    GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK \
    LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK \
    NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD \
    SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG \
    YER ZAR ZMW ZWG ZWL
    """
}
