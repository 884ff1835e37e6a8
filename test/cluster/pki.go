package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the set of keys and certificates of one cluster, all made fresh in
// its directory, so clusters never share credentials with each other or with
// anything on the machine.
type pki struct {
	dir string
	// caPEM signs the API server's serving certificate and the admin's
	// client certificate.
	caPEM []byte
	// adminCertPEM and adminKeyPEM authenticate as system:masters.
	adminCertPEM, adminKeyPEM []byte
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func newPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the PKI dir: %w", err)
	}
	p := &pki{dir: dir}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "ripple-test-ca"},
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caCert, caPEM, err := p.sign(caTmpl, caKey.Public(), nil, caKey)
	if err != nil {
		return nil, err
	}
	p.caPEM = caPEM

	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		// 10.0.0.1 is the kubernetes Service's address in serviceCIDR.
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 0, 0, 1)},
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "ripple-test-admin", Organization: []string{"system:masters"}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if _, _, err := p.issue("apiserver", serving, caCert, caKey); err != nil {
		return nil, err
	}
	if p.adminCertPEM, p.adminKeyPEM, err = p.issue("admin", admin, caCert, caKey); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.path("ca.crt"), caPEM, 0o600); err != nil {
		return nil, fmt.Errorf("writing the CA: %w", err)
	}
	return p, p.writeServiceAccountKey()
}

// sign creates a certificate for pub from tmpl, signed by parent and
// parentKey, or self-signed when parent is nil.
func (p *pki) sign(tmpl *x509.Certificate, pub crypto.PublicKey, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, []byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, nil, fmt.Errorf("generating a serial number: %w", err)
	}
	tmpl.SerialNumber = serial
	// A minute of slack in case a component's clock reading lags ours.
	tmpl.NotBefore = time.Now().Add(-time.Minute)
	tmpl.NotAfter = time.Now().Add(7 * 24 * time.Hour)
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the %s certificate: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing the %s certificate: %w", tmpl.Subject.CommonName, err)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// issue creates a key and a certificate signed by the CA and writes them to
// <name>.key and <name>.crt.
func (p *pki) issue(name string, tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the %s key: %w", name, err)
	}
	_, certPEM, err = p.sign(tmpl, key.Public(), ca, caKey)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the %s key: %w", name, err)
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(p.path(name+".crt"), certPEM, 0o600); err != nil {
		return nil, nil, fmt.Errorf("writing the %s certificate: %w", name, err)
	}
	if err := os.WriteFile(p.path(name+".key"), keyPEM, 0o600); err != nil {
		return nil, nil, fmt.Errorf("writing the %s key: %w", name, err)
	}
	return certPEM, keyPEM, nil
}

// writeServiceAccountKey writes sa.key, with which kube-apiserver signs
// service account tokens and the token controller of
// kube-controller-manager signs legacy token Secrets, and sa.pub, with which
// kube-apiserver verifies both. RSA, because every token signer accepts it.
func (p *pki) writeServiceAccountKey() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encoding the service account public key: %w", err)
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(p.path("sa.key"), priv, 0o600); err != nil {
		return fmt.Errorf("writing the service account key: %w", err)
	}
	if err := os.WriteFile(p.path("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return fmt.Errorf("writing the service account public key: %w", err)
	}
	return nil
}
