import Foundation

extension FakeCertificateAuthority {
  /// What the fake chain looks like; the defaults mimic Apple's, other values make forgeries.
  public struct Options: Sendable {
    public var intermediateHasAppleOID: Bool
    public var leafHasAppleOID: Bool
    /// Validity of all three certificates.
    public var notBefore: Date
    public var notAfter: Date

    public init(
      intermediateHasAppleOID: Bool = true, leafHasAppleOID: Bool = true,
      notBefore: Date = Date(timeIntervalSinceNow: -86_400),
      notAfter: Date = Date(timeIntervalSinceNow: 2 * 365 * 86_400)
    ) {
      self.intermediateHasAppleOID = intermediateHasAppleOID
      self.leafHasAppleOID = leafHasAppleOID
      self.notBefore = notBefore
      self.notAfter = notAfter
    }

    static let appleIntermediateOID = "1.2.840.113635.100.6.2.1"
    static let appleLeafOID = "1.2.840.113635.100.6.11.1"
  }
}
