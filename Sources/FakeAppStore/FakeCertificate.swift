import COpenSSL
import Foundation

/// An X.509 certificate the fake CA issued, owned.
final class FakeCertificate: @unchecked Sendable {
  // Read-only after it is signed.
  let pointer: OpaquePointer
  let der: [UInt8]

  struct Profile {
    var commonName: String
    var serial: Int
    var isCA: Bool
    /// The CA's `pathlen` (Apple's WWDR intermediate says 0; its root says nothing).
    var pathLength: Int?
    var appleOID: String?
    var notBefore: Date
    var notAfter: Date
  }

  /// Issues a certificate for `key`; self-signed when `issuer` is nil.
  init(
    _ profile: Profile, key: FakeSigningKey,
    issuer: (certificate: FakeCertificate, key: FakeSigningKey)?
  )
    throws
  {
    guard let certificate = X509_new() else { throw FakeCryptoError("X509_new") }
    do {
      try Self.fill(certificate, profile, key: key, issuer: issuer)
      guard X509_sign(certificate, (issuer?.key ?? key).pointer, EVP_sha256()) > 0 else {
        throw FakeCryptoError("X509_sign")
      }
      let length = i2d_X509(certificate, nil)
      guard length > 0 else { throw FakeCryptoError("i2d_X509") }
      var der = [UInt8](repeating: 0, count: Int(length))
      let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor = buffer.baseAddress
        return i2d_X509(certificate, &cursor)
      }
      guard written == length else { throw FakeCryptoError("i2d_X509") }
      self.der = der
      self.pointer = certificate
    } catch {
      ERR_clear_error()
      X509_free(certificate)
      throw error
    }
  }

  deinit { X509_free(pointer) }

  var base64: String { Data(der).base64EncodedString() }

  var pem: String {
    let body = Data(der).base64EncodedString(options: [
      .lineLength64Characters, .endLineWithLineFeed,
    ])
    return "-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n"
  }

  private static func fill(
    _ certificate: OpaquePointer, _ profile: Profile, key: FakeSigningKey,
    issuer: (certificate: FakeCertificate, key: FakeSigningKey)?
  ) throws {
    guard X509_set_version(certificate, 2) == 1,
      ASN1_INTEGER_set(X509_get_serialNumber(certificate), profile.serial) == 1,
      ASN1_TIME_set(
        X509_getm_notBefore(certificate), time_t(profile.notBefore.timeIntervalSince1970)) != nil,
      ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(profile.notAfter.timeIntervalSince1970))
        != nil,
      X509_set_pubkey(certificate, key.pointer) == 1
    else { throw FakeCryptoError("X509 fields") }

    guard let name = X509_NAME_new() else { throw FakeCryptoError("X509_NAME_new") }
    defer { X509_NAME_free(name) }
    guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, profile.commonName, -1, -1, 0) == 1,
      X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, "Storekeeper Fake App Store", -1, -1, 0)
        == 1,
      X509_set_subject_name(certificate, name) == 1,
      X509_set_issuer_name(
        certificate, issuer.map { X509_get_subject_name($0.certificate.pointer) } ?? name) == 1
    else { throw FakeCryptoError("X509 names") }

    var context = X509V3_CTX()
    X509V3_set_ctx(&context, issuer?.certificate.pointer ?? certificate, certificate, nil, nil, 0)
    for (nid, value) in extensions(profile, selfSigned: issuer == nil) {
      guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
        throw FakeCryptoError("extension \(nid)")
      }
      defer { X509_EXTENSION_free(ext) }
      guard X509_add_ext(certificate, ext, -1) == 1 else { throw FakeCryptoError("X509_add_ext") }
    }
    if let oid = profile.appleOID { try addMarker(oid, to: certificate) }
  }

  /// The extensions Apple's certificates carry, in the shape OpenSSL's strict chain check
  /// (`X509_V_FLAG_X509_STRICT`, which Apple's libraries set) demands: basic constraints and
  /// key usage critical, a subject key identifier on each, and an authority key identifier
  /// naming the issuer's on all but the self-signed root, as on Apple Root CA - G3.
  private static func extensions(_ profile: Profile, selfSigned: Bool) -> [(Int32, String)] {
    let basic =
      profile.isCA
      ? "critical,CA:TRUE" + (profile.pathLength.map { ",pathlen:\($0)" } ?? "")
      : "critical,CA:FALSE"
    let usage = profile.isCA ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature"
    let identifiers: [(Int32, String)] =
      [(NID_subject_key_identifier, "hash")]
      + (selfSigned ? [] : [(NID_authority_key_identifier, "keyid:always")])
    return [(NID_basic_constraints, basic), (NID_key_usage, usage)] + identifiers
  }

  /// Apple's markers are non-critical extensions whose value is DER NULL.
  private static func addMarker(_ oid: String, to certificate: OpaquePointer) throws {
    guard let object = OBJ_txt2obj(oid, 1) else { throw FakeCryptoError("OBJ_txt2obj") }
    defer { ASN1_OBJECT_free(object) }
    guard let value = ASN1_OCTET_STRING_new() else {
      throw FakeCryptoError("ASN1_OCTET_STRING_new")
    }
    defer { ASN1_OCTET_STRING_free(value) }
    let null: [UInt8] = [0x05, 0x00]
    guard ASN1_OCTET_STRING_set(value, null, Int32(null.count)) == 1,
      let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
    else { throw FakeCryptoError("Apple marker extension") }
    defer { X509_EXTENSION_free(ext) }
    guard X509_add_ext(certificate, ext, -1) == 1 else { throw FakeCryptoError("X509_add_ext") }
  }
}
