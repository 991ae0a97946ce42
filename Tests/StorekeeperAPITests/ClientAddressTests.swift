import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

@Suite struct ClientAddressTests {
  static let proxies = ClientAddress(
    trustedProxies: ClientAddress.parseTrusted("10.0.0.0/8, 192.168.1.7, fd00::/8") ?? [])

  @Test func withoutTrustedProxiesForwardedForIsIgnored() {
    let direct = ClientAddress()
    #expect(direct.resolve(peer: "203.0.113.9:5555", forwardedFor: ["1.2.3.4"]) == "203.0.113.9")
    #expect(direct.resolve(peer: "[2001:db8::1]:443", forwardedFor: []) == "2001:db8::1")
  }

  @Test func aSpoofedHeaderFromAnUntrustedPeerIsIgnored() {
    #expect(
      Self.proxies.resolve(peer: "203.0.113.9:5555", forwardedFor: ["1.2.3.4"]) == "203.0.113.9")
  }

  @Test func theFirstUntrustedHopFromTheRightIsTheClient() {
    // The client wrote "6.6.6.6" itself; the proxies appended what they saw.
    let client = Self.proxies.resolve(
      peer: "10.1.1.1:80", forwardedFor: ["6.6.6.6, 198.51.100.20", "192.168.1.7"])
    #expect(client == "198.51.100.20")
    #expect(Self.proxies.resolve(peer: "10.1.1.1:80", forwardedFor: []) == "10.1.1.1")
    #expect(
      Self.proxies.resolve(peer: "[fd00::5]:80", forwardedFor: ["2001:db8::7"]) == "2001:db8::7")
    // Garbage where an address should be: nothing left of it is believed.
    #expect(
      Self.proxies.resolve(peer: "10.1.1.1:80", forwardedFor: ["1.2.3.4, bogus"]) == "10.1.1.1")
    // Every hop trusted: the leftmost is as far as anyone can tell.
    #expect(Self.proxies.resolve(peer: "10.1.1.1:80", forwardedFor: ["10.2.2.2"]) == "10.2.2.2")
  }

  @Test func networksMatchByPrefix() throws {
    let net = try #require(IPNetwork("10.0.0.0/8"))
    #expect(net.contains(IPNetwork.address("10.255.0.1") ?? []))
    #expect(!net.contains(IPNetwork.address("11.0.0.1") ?? []))
    #expect(net.contains(IPNetwork.address("::ffff:10.0.0.1") ?? []))
    #expect(IPNetwork("10.0.0.0/33") == nil && IPNetwork("nonsense") == nil)
    #expect(ClientAddress.parseTrusted("10.0.0.1,nope") == nil)
  }
}
