/** The SMux control API client both hosts use (the {@code SmuxControl} port over HTTP). */
package org.hybridlb.app.core.smux;
