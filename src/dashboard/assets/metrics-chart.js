// The metrics page's chart: the series in the element's data-chart attribute, drawn by uPlot
// (served beside this file), with times shown in the zone the page was asked for.
'use strict';

const COLORS = { sent: '#4b5563', delivered: '#15803d', bounced: '#b91c1c', complained: '#c2410c', opened: '#1d4ed8', clicked: '#7e22ce' };

const element = document.getElementById('metrics-chart');
if (element && window.uPlot) {
  const { timezone, periods, series } = JSON.parse(element.dataset.chart);
  const names = Object.keys(series);
  const size = () => ({ width: Math.max(320, element.clientWidth), height: 320 });
  const plot = new uPlot(
    {
      ...size(),
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), timezone),
      series: [{}, ...names.map((name) => ({ label: name, stroke: COLORS[name], width: 2 }))],
    },
    [periods, ...names.map((name) => series[name])],
    element,
  );
  element.dataset.drawn = 'true';
  window.addEventListener('resize', () => plot.setSize(size()));
}
