package org.hybridlb.solver.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class ProgressBarTest {
    @Test
    void drawsPhaseAndPercentageAndEndsTheLineWhenDone() {
        StringWriter sw = new StringWriter();
        ProgressBar bar = new ProgressBar(new PrintWriter(sw), true);
        bar.update("intervals", 0, 4);
        bar.update("intervals", 4, 4);
        String text = sw.toString();
        assertTrue(text.contains("  0% intervals 0/4"), text);
        assertTrue(text.contains("100% intervals 4/4"), text);
        assertTrue(text.endsWith(System.lineSeparator()), "a finished phase ends its line");
        assertEquals(2, text.split("\r", -1).length - 1, "redraws in place with carriage returns");
    }

    @Test
    void disabledBarPrintsNothing() {
        StringWriter sw = new StringWriter();
        ProgressBar bar = new ProgressBar(new PrintWriter(sw), false);
        bar.update("vips", 5, 10);
        bar.update("vips", 10, 10);
        assertEquals("", sw.toString());
        assertTrue(ProgressBar.wanted(Boolean.TRUE));
        assertEquals(false, ProgressBar.wanted(Boolean.FALSE));
    }
}
