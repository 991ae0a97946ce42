/// Who is on the other end of a request, for rate limits and anything else keyed on the client:
/// the socket's peer, unless that peer is one of `TRUSTED_PROXIES`, in which case
/// `X-Forwarded-For` is read from the right (each proxy appends the address it saw) and the
/// first hop that is not itself a trusted proxy is the client. A client can put anything at the
/// left of that header, so nothing left of the first untrusted hop is believed, and the header
/// is ignored altogether when the peer is not a trusted proxy.
package struct ClientAddress: Sendable {
  let trustedProxies: [IPNetwork]

  package init(trustedProxies: [IPNetwork] = []) { self.trustedProxies = trustedProxies }

  /// Reads `TRUSTED_PROXIES`: addresses or CIDR blocks, comma-separated.
  package static func parseTrusted(_ text: String) -> [IPNetwork]? {
    var networks: [IPNetwork] = []
    for entry in text.split(separator: ",") where !entry.allSatisfy({ $0 == " " }) {
      guard let network = IPNetwork(String(entry)) else { return nil }
      networks.append(network)
    }
    return networks
  }

  /// `peer` is the connection's `host:port` (`[v6]:port`); `forwardedFor` every
  /// `X-Forwarded-For` field line, in order.
  func resolve(peer: String, forwardedFor: [String]) -> String {
    let direct = Self.host(ofPeer: peer)
    guard !trustedProxies.isEmpty, isTrusted(direct), !forwardedFor.isEmpty else { return direct }
    let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map {
      $0.trimmingCharacters(in: [" ", "\t"])
    }
    var client = direct
    for hop in hops.reversed() {
      guard IPNetwork.address(hop) != nil else { return client }
      client = hop
      if !isTrusted(hop) { return hop }
    }
    return client
  }

  private func isTrusted(_ host: String) -> Bool {
    guard let bytes = IPNetwork.address(host) else { return false }
    return trustedProxies.contains { $0.contains(bytes) }
  }

  /// The address without its port.
  /// Scans bytes, not characters: it runs on every limited request.
  static func host(ofPeer peer: String) -> String {
    let bytes = peer.utf8
    if bytes.first == UInt8(ascii: "["), let end = bytes.firstIndex(of: UInt8(ascii: "]")) {
      return String(peer[bytes.index(after: bytes.startIndex)..<end])
    }
    if let colon = bytes.lastIndex(of: UInt8(ascii: ":")),
      bytes.firstIndex(of: UInt8(ascii: ":")) == colon
    {
      return String(peer[..<colon])
    }
    return peer
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: Set<Character>) -> String {
    String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
  }
}
