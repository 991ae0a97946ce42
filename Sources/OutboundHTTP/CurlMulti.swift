import CCurl

/// The multi handle, freed with its owner.
final class CurlMulti: @unchecked Sendable {
  // curl_multi_wakeup may be called from any thread; everything else runs on the loop's.
  let handle: UnsafeMutableRawPointer

  init() {
    guard let handle = curl_multi_init() else {
      fatalError("libcurl: no multi handle (out of memory)")
    }
    self.handle = handle
  }

  deinit { curl_multi_cleanup(handle) }
}
