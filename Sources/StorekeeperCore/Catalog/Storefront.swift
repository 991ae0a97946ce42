/// App Store storefronts and Google Play regions are countries, ISO 3166-1: the App Store spells
/// them alpha-3 (`Storefront.countryCode` "DEU"), Google Play alpha-2 (`regionCode` "DE").
/// Storekeeper keys prices by alpha-3 and takes either spelling (upper case) from a request or an admin, so a
/// product has one price per country whichever store asks. The table is ISO 3166-1's officially
/// assigned codes (249), as Debian's iso-codes lists them, and Kosovo (XK, XKS), which both stores
/// sell in under the user-assigned codes.
package enum Storefront {
  /// The alpha-3 code for `text` (alpha-2 or alpha-3, upper case as both stores send them);
  /// nil for anything else.
  package static func canonical(_ text: some StringProtocol) -> String? {
    canonical(String(text))
  }

  /// The same for a `String`, without the generic conversion (an offering request's storefront
  /// is checked on every request).
  package static func canonical(_ code: String) -> String? {
    switch code.utf8.count {
    case 2: return alpha3ByAlpha2[code]
    case 3: return isAlpha3(code) ? code : nil
    default: return nil
    }
  }

  /// Every alpha-3 code, for tests and listings.
  package static var allCodes: [String] { alpha3.sorted() }

  private static let alpha3ByAlpha2: [String: String] = {
    var table: [String: String] = [:]
    for pair in pairs.split(separator: " ") {
      table[String(pair.prefix(2))] = String(pair.suffix(3))
    }
    return table
  }()

  private static let alpha3 = Set(alpha3ByAlpha2.values)

  /// Every alpha-3 code as one bit, at its letters read as a number base 26: an app sends its
  /// storefront with every offering request, and testing a bit costs less than hashing the
  /// string into `alpha3`.
  private static let alpha3Bits: [UInt64] = {
    var bits = [UInt64](repeating: 0, count: (26 * 26 * 26 + 63) / 64)
    for code in alpha3 {
      guard let index = letterIndex(code) else { continue }
      bits[index >> 6] |= 1 << UInt64(index & 63)
    }
    return bits
  }()

  private static func isAlpha3(_ code: String) -> Bool {
    guard let index = letterIndex(code) else { return false }
    return alpha3Bits[index >> 6] & (1 << UInt64(index & 63)) != 0
  }

  /// Three upper-case ASCII letters as a number below 26³; nil for anything else.
  private static func letterIndex(_ code: String) -> Int? {
    var index = 0
    var count = 0
    for byte in code.utf8 {
      guard byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z"), count < 3 else { return nil }
      index = index * 26 + Int(byte - UInt8(ascii: "A"))
      count += 1
    }
    return count == 3 ? index : nil
  }

  /// Alpha-2 then alpha-3, five letters a country.
  private static let pairs = """
    ADAND AEARE AFAFG AGATG AIAIA ALALB AMARM AOAGO AQATA ARARG ASASM ATAUT AUAUS AWABW AXALA \
    AZAZE BABIH BBBRB BDBGD BEBEL BFBFA BGBGR BHBHR BIBDI BJBEN BLBLM BMBMU BNBRN BOBOL BQBES \
    BRBRA BSBHS BTBTN BVBVT BWBWA BYBLR BZBLZ CACAN CCCCK CDCOD CFCAF CGCOG CHCHE CICIV CKCOK \
    CLCHL CMCMR CNCHN COCOL CRCRI CUCUB CVCPV CWCUW CXCXR CYCYP CZCZE DEDEU DJDJI DKDNK DMDMA \
    DODOM DZDZA ECECU EEEST EGEGY EHESH ERERI ESESP ETETH FIFIN FJFJI FKFLK FMFSM FOFRO FRFRA \
    GAGAB GBGBR GDGRD GEGEO GFGUF GGGGY GHGHA GIGIB GLGRL GMGMB GNGIN GPGLP GQGNQ GRGRC GSSGS \
    GTGTM GUGUM GWGNB GYGUY HKHKG HMHMD HNHND HRHRV HTHTI HUHUN IDIDN IEIRL ILISR IMIMN ININD \
    IOIOT IQIRQ IRIRN ISISL ITITA JEJEY JMJAM JOJOR JPJPN KEKEN KGKGZ KHKHM KIKIR KMCOM KNKNA \
    KPPRK KRKOR KWKWT KYCYM KZKAZ LALAO LBLBN LCLCA LILIE LKLKA LRLBR LSLSO LTLTU LULUX LVLVA \
    LYLBY MAMAR MCMCO MDMDA MEMNE MFMAF MGMDG MHMHL MKMKD MLMLI MMMMR MNMNG MOMAC MPMNP MQMTQ \
    MRMRT MSMSR MTMLT MUMUS MVMDV MWMWI MXMEX MYMYS MZMOZ NANAM NCNCL NENER NFNFK NGNGA NINIC \
    NLNLD NONOR NPNPL NRNRU NUNIU NZNZL OMOMN PAPAN PEPER PFPYF PGPNG PHPHL PKPAK PLPOL PMSPM \
    PNPCN PRPRI PSPSE PTPRT PWPLW PYPRY QAQAT REREU ROROU RSSRB RURUS RWRWA SASAU SBSLB SCSYC \
    SDSDN SESWE SGSGP SHSHN SISVN SJSJM SKSVK SLSLE SMSMR SNSEN SOSOM SRSUR SSSSD STSTP SVSLV \
    SXSXM SYSYR SZSWZ TCTCA TDTCD TFATF TGTGO THTHA TJTJK TKTKL TLTLS TMTKM TNTUN TOTON TRTUR \
    TTTTO TVTUV TWTWN TZTZA UAUKR UGUGA UMUMI USUSA UYURY UZUZB VAVAT VCVCT VEVEN VGVGB VIVIR \
    VNVNM VUVUT WFWLF WSWSM YEYEM YTMYT ZAZAF ZMZMB ZWZWE XKXKS
    """
}
