// kcbench's chart code: draws the chart specs of a report (or of the live
// dashboard) with Apache ECharts. One file for the static and the live page.
(function () {
  "use strict";
  var charts = {};
  window.kcbenchCharts = charts;

  function fmt(v) {
    if (v === null || v === undefined || isNaN(v)) return "-";
    return String(v);
  }

  function markLine(spec) {
    if (!spec.marks || !spec.marks.length) return undefined;
    var styles = {
      start: { color: "#777", type: "dashed" },
      warmup: { color: "#999", type: "dotted" },
      event: { color: "#D55E00", type: "solid", width: 2 },
      found: { color: "#009E73", type: "dashed", width: 2 }
    };
    return {
      symbol: "none", silent: true, animation: false,
      label: { show: true, position: "insideEndTop", fontSize: 10, formatter: "{b}" },
      data: spec.marks.map(function (m) {
        var st = styles[m.kind] || styles.start;
        return { xAxis: m.x, name: m.label || "", lineStyle: st,
          label: { color: st.color, show: !!m.label } };
      })
    };
  }

  function lineData(se, log) {
    if (!log) return se.data;
    return se.data.map(function (p) {
      return [p[0], p[1] !== null && p[1] > 0 ? p[1] : null];
    });
  }

  function option(spec, logY) {
    var o = {
      animation: false,
      textStyle: { fontFamily: "system-ui, sans-serif" },
      legend: { type: "scroll", top: 0, left: "center" },
      // the legend has its own band above the plot: it never covers data
      grid: { top: 44, left: 64, right: 28, bottom: spec.zoom ? 78 : 48 },
      tooltip: { trigger: "axis", confine: true, valueFormatter: fmt },
      toolbox: { right: 8, top: 18, itemSize: 12, feature: {} }
    };
    var yAxis = {
      type: logY ? "log" : "value", name: spec.y.label, nameLocation: "middle", nameGap: 48,
      scale: false, axisLabel: { hideOverlap: true }
    };
    if (spec.kind === "bar") {
      o.xAxis = { type: "category", data: spec.groups, axisLabel: { interval: 0, rotate: spec.groups.length > 6 ? 30 : 0 } };
      o.yAxis = yAxis;
      o.tooltip.axisPointer = { type: "shadow" };
      o.series = spec.series.map(function (se) {
        return { type: "bar", name: se.name, data: se.values,
          itemStyle: { color: se.color, opacity: se.faded ? 0.5 : 1 } };
      });
      return o;
    }
    o.xAxis = {
      type: spec.x.log ? "log" : "value", name: spec.x.label, nameLocation: "middle", nameGap: 28,
      min: "dataMin", max: "dataMax",
      axisLabel: { hideOverlap: true, formatter: function (v) { return String(+v.toPrecision(4)); } }
    };
    o.yAxis = yAxis;
    o.series = spec.series.map(function (se, i) {
      var s = {
        type: "line", name: se.name, data: lineData(se, logY), color: se.color,
        showSymbol: !!spec.points, symbolSize: 6, connectNulls: false,
        lineStyle: { width: se.reading ? 1 : 1.5, type: se.reading || se.dashed ? "dashed" : "solid" },
        emphasis: { disabled: true }
      };
      if (i === 0) s.markLine = markLine(spec);
      return s;
    });
    if (spec.zoom) {
      o.toolbox.feature = { dataZoom: { yAxisIndex: "none", title: { zoom: "drag to zoom", back: "undo zoom" } },
        restore: { title: "reset" } };
      o.dataZoom = [
        { type: "inside", xAxisIndex: 0, zoomOnMouseWheel: true, moveOnMouseMove: false },
        { type: "slider", xAxisIndex: 0, height: 16, bottom: 8 }
      ];
    }
    return o;
  }

  function draw(el, spec) {
    var chart = echarts.getInstanceByDom(el) || echarts.init(el, null, { renderer: "canvas" });
    var logY = !!spec.y.log;
    chart.setOption(option(spec, logY), true);
    if (spec.zoom) {
      // a drag on the plot selects the range to zoom into
      chart.dispatchAction({ type: "takeGlobalCursor", key: "dataZoomSelect", dataZoomSelectActive: true });
    }
    charts[el.getAttribute("data-chart")] = { chart: chart, spec: spec };
    var sw = el.parentNode.querySelector("button.logswitch");
    if (spec.y.switch && !sw) {
      sw = document.createElement("button");
      sw.className = "logswitch";
      sw.type = "button";
      el.parentNode.insertBefore(sw, el);
      sw.addEventListener("click", function () {
        logY = !logY;
        chart.setOption(option(spec, logY), true);
        if (spec.zoom) chart.dispatchAction({ type: "takeGlobalCursor", key: "dataZoomSelect", dataZoomSelectActive: true });
        sw.textContent = logY ? "latency axis: log (switch to linear)" : "latency axis: linear (switch to log)";
        sw.setAttribute("data-log", logY ? "1" : "0");
      });
    }
    if (sw) {
      sw.textContent = logY ? "latency axis: log (switch to linear)" : "latency axis: linear (switch to log)";
      sw.setAttribute("data-log", logY ? "1" : "0");
    }
  }

  // drawAll draws every element with a data-chart attribute from specs
  // (chart name → spec).
  function drawAll(specs) {
    var els = document.querySelectorAll("[data-chart]");
    for (var i = 0; i < els.length; i++) {
      var spec = specs[els[i].getAttribute("data-chart")];
      if (spec) draw(els[i], spec);
    }
  }
  window.kcbenchDraw = drawAll;

  window.addEventListener("resize", function () {
    for (var k in charts) charts[k].chart.resize();
  });

  var data = document.getElementById("kcbench-specs");
  if (data) drawAll(JSON.parse(data.textContent));
  window.kcbenchDrawnMs = performance.now();

  // The live dashboard: poll live.json (same origin) once a second, show
  // the status, redraw the charts; reload for the final report at the end.
  function setText(id, v) {
    var el = document.getElementById(id);
    if (el) el.textContent = v || "-";
  }
  function poll() {
    fetch("live.json", { cache: "no-store" }).then(function (r) {
      if (!r.ok) throw new Error("live.json: " + r.status);
      return r.json();
    }).then(function (d) {
      setText("live-run", d.status.run);
      setText("live-point", d.status.point);
      setText("live-phase", d.status.phase);
      setText("live-step", d.status.step);
      setText("live-elapsed", d.elapsed);
      setText("live-eta", d.done ? "finished" : d.eta);
      drawAll(d.specs || {});
      window.kcbenchLive = d;
      if (d.done) {
        if (d.final) location.reload();
        return;
      }
      setTimeout(poll, 1000);
    }).catch(function () {
      // the run ended and its dashboard with it: keep what is shown
      setText("live-eta", "dashboard gone (the run ended)");
    });
  }
  if (document.body.getAttribute("data-live")) poll();
})();
