#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/asn1.h>
#include <openssl/pkcs7.h>

/* SHA-256 through the low-level functions: OpenSSL 3's one-shot SHA256() goes through
   EVP_Q_digest, which fetches the algorithm from the provider store (a read lock, a string
   compare, an allocated context) on every call; these hash on the stack. They are deprecated
   for new code in favour of EVP, not removed, and give the same digest. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline void storekeeper_sha256(const void *data, size_t count, unsigned char *digest) {
  SHA256_CTX context;
  SHA256_Init(&context);
  SHA256_Update(&context, data, count);
  SHA256_Final(digest, &context);
  OPENSSL_cleanse(&context, sizeof(context));
}
#pragma clang diagnostic pop
