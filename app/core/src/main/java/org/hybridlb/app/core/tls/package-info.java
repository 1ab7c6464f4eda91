/** TLS material (PKCS#12 identities, PEM CAs) and the management plane's HTTP client, JDK only. */
package org.hybridlb.app.core.tls;
