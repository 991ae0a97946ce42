/// A request as the loop hands it to libcurl: plain values, so it crosses threads freely.
struct OutboundRequest: Sendable {
  var url: String
  var method: String
  var headers: [(String, String)]
  var body: [UInt8]?
  var timeout: Duration
}
