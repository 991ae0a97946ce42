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
    let code = String(text)
    switch code.utf8.count {
    case 2: return alpha3ByAlpha2[code]
    case 3: return alpha3.contains(code) ? code : nil
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
