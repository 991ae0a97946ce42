/// The JOSE header fields that matter here. `crit` names extensions a verifier must
/// understand; this one understands none, so any `crit` refuses the token (RFC 7515 §4.1.11).
struct JWTHeader: Decodable {
  var alg: String
  var kid: String?
  var crit: [String]?
}
